#include "powershape/util/output_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "powershape/util/error.hpp"
#include "powershape/util/output_file.hpp"
#include "powershape/util/stdout_data.hpp"

namespace powershape::util {

OutputLock::OutputLock(const std::string& path, const std::string& option, Written when)
    : path_(path) {
  if (util::is_stdout(path)) return;  // standard output: nothing to lock or create
  // A failed call's errno, kinded as every write's is (write_failed), under the option's name.
  auto fail = [&](int err) { rethrow_with(option + ": ", write_failed(path, err)); };
  util::OutputKind kind{};
  try {
    kind = util::check_output(path);
  } catch (const std::exception& e) {
    rethrow_with(option + ": ", e);
  }
  if (kind == util::OutputKind::kNull || kind == util::OutputKind::kOwnDescriptor)
    return;  // written into as it is: nothing to lock or create
  const bool existed = kind != util::OutputKind::kAbsent;
  if (!existed && when == Written::kAtEnd) {
    const auto dir = std::filesystem::path(path).parent_path();
    if (access(dir.empty() ? "." : dir.c_str(), W_OK) != 0) fail(errno);
    return;
  }
  try {
    fd_ = util::open_output(path, /*truncate=*/false);
  } catch (const std::exception& e) {
    rethrow_with(option + ": ", e);
  }
  created_ = !existed;
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw invalid_input(option + ": cannot write " + path +
                          ": another powershape monitor is writing it");
    fail(err);
  }
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  // Only the file this created, still empty, and still at that path (not one renamed over it).
  struct stat st {
  }, now{};
  if (created_ && fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
      stat(path_.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
    unlink(path_.c_str());
  }
  close(fd_);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

std::vector<std::unique_ptr<OutputLock>> claim_outputs(const std::vector<Output>& outputs,
                                                       const std::vector<std::string>& inputs) {
  const auto named = [](const Output& o) { return !o.path.empty() && o.path != "-"; };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Output& o = outputs[i];
    if (!named(o)) continue;
    for (const auto& in : inputs)
      if (!in.empty() && same_file(in, o.path))
        throw invalid_input(std::string(o.label) + ": " + o.path +
                            " is an input; it would be overwritten");
    for (std::size_t j = 0; j < i; ++j)
      if (named(outputs[j]) && (same_file(outputs[j].path, o.path) ||
                                std::filesystem::weakly_canonical(outputs[j].path) ==
                                    std::filesystem::weakly_canonical(o.path)))
        throw invalid_input(std::string(outputs[j].label) + " and " + o.label +
                            " name the same file " + o.path);
  }
  std::vector<std::unique_ptr<OutputLock>> locks;
  for (const auto& o : outputs)
    if (!o.path.empty()) locks.push_back(std::make_unique<OutputLock>(o.path, o.label, o.when));
  return locks;
}

}  // namespace powershape::util
