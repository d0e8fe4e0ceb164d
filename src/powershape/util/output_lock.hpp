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

// Claims the outputs a run writes whole at its end, each as (path, the label its errors give it);
// an empty path is none asked for. Held until the run ends.
std::vector<std::unique_ptr<OutputLock>> claim_at_end(
    const std::vector<std::pair<std::string, const char*>>& outputs);

// Refuses an output (labelled as above) that is one of the run's inputs (a recording, a spec):
// written whole at the end, it would replace what it was read from. "-" is standard output.
void refuse_input_as_output(const std::string& out, const char* label,
                            const std::vector<std::string>& inputs);

// True when a and b name the same existing file (hard links and symbolic links included).
bool same_file(const std::string& a, const std::string& b);

}  // namespace powershape::util
