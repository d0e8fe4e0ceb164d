#include "powershape/util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "powershape/util/error.hpp"
#include "powershape/util/output_file.hpp"
#include "powershape/util/stdout_data.hpp"

namespace powershape::util {

namespace {

// Writes all of text to fd; 0, or the errno that stopped it (ENOSPC for a write of nothing).
int write_all(int fd, std::string_view text) {
  std::size_t at = 0;
  while (at < text.size()) {
    const ssize_t n = write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    at += static_cast<std::size_t>(n);
  }
  return 0;
}

void write_into(const std::string& path, std::string_view text) {
  const int fd = open_output(path, /*truncate=*/true);
  const int err = write_all(fd, text);
  close(fd);
  if (err != 0) throw write_failed(path, err);
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view text, unsigned mode) {
  if (is_stdout(path)) return write_stdout(std::string(text));
  // /dev/null is written into, never renamed over: a rename would replace the node itself, which
  // root may do. Links, devices, FIFOs and folders are refused (output_file.hpp).
  const OutputKind kind = check_output(path);
  if (kind == OutputKind::kNull || kind == OutputKind::kOwnDescriptor)
    return write_into(path, text);
  struct stat st {};
  // A file of ours keeps its mode; one another user left there does not lend us its (0666)
  // mode.
  if (kind == OutputKind::kRegular && lstat(path.c_str(), &st) == 0 && st.st_uid == geteuid())
    mode = st.st_mode & 07777;
  static std::atomic<unsigned> serial{0};  // threads of one process each get their own file
  const std::string tmp = path + ".tmp" + std::to_string(getpid()) + "." + std::to_string(serial++);
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) throw write_failed(path, errno);
  const auto fail = [&](int err) {
    close(fd);
    unlink(tmp.c_str());
    throw write_failed(path, err);
  };
  if (const int err = write_all(fd, text); err != 0) fail(err);
  if (fchmod(fd, mode) != 0 || fsync(fd) != 0) fail(errno);
  if (close(fd) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    throw write_failed(path, err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    throw write_failed(path, err);
  }
}

}  // namespace powershape::util
