#pragma once
// An output file claimed before a recording starts: checked for being writable and not a
// folder, and held with an exclusive lock (flock) so that a second monitor given the same path
// is refused instead of truncating what the first is writing. A file written live (the CSV) is
// created now; one written whole at the end (JSON, Perfetto, the report: util/atomic_file.hpp) is
// not, so a monitor that is killed leaves no empty file; only its folder is checked.
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace powershape::util {

class OutputLock {
 public:
  // Throws an Error naming the option (the label the caller gives: "-o") and the path when the
  // file cannot be written
  // or another process holds it. Nothing is truncated here.
  enum class Written { kLive, kAtEnd };
  OutputLock(const std::string& path, const std::string& option, Written when);
  // Removes the file when this created it and nothing was written into it.
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
  bool created_ = false;
};

// An output a run asks for: its path (empty: none asked for; "-": standard output), the label
// its errors give it (the caller's: "-o"), and when it is written.
struct Output {
  std::string path;
  const char* label;
  OutputLock::Written when = OutputLock::Written::kAtEnd;
};
// Claims a run's outputs before it starts, held until it ends. Refused, naming the output: one
// that is one of the run's inputs (a recording, a spec: written, it would replace what it was
// read from), or a file another output names too.
std::vector<std::unique_ptr<OutputLock>> claim_outputs(const std::vector<Output>& outputs,
                                                       const std::vector<std::string>& inputs = {});

// True when a and b name the same existing file (hard links and symbolic links included).
bool same_file(const std::string& a, const std::string& b);

}  // namespace powershape::util
