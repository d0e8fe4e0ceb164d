#include "powershape/util/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "powershape/util/error.hpp"

namespace powershape::util {
namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw invalid_input("cannot write " + path + ": " + why);
}

bool is_dev_null(const struct stat& st) {
  return S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
}

// The descriptor a path names when it is one of this process's own, else -1.
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.rfind(prefix, 0) != 0) continue;
    const std::string digits = path.substr(prefix.size());
    if (digits.empty() || digits.size() > 6 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      return -1;
    return std::stoi(digits);
  }
  return -1;
}

OutputKind kind_of(const std::string& path, const struct stat& st) {
  if (S_ISREG(st.st_mode)) return OutputKind::kRegular;
  if (is_dev_null(st)) return OutputKind::kNull;
  if (S_ISLNK(st.st_mode)) refuse(path, "it is a symbolic link (name the file it points to)");
  if (S_ISDIR(st.st_mode)) refuse(path, "it is a folder");
  if (S_ISFIFO(st.st_mode)) refuse(path, "it is a FIFO (use - for standard output)");
  refuse(path, "it is a device or socket, not a file");
}

}  // namespace

OutputKind check_output(const std::string& path) {
  if (const int fd = own_descriptor(path); fd >= 0) {
    if (fcntl(fd, F_GETFD) == -1) refuse(path, "this process has no such open descriptor");
    return OutputKind::kOwnDescriptor;
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return OutputKind::kAbsent;
    throw write_failed(path, errno);
  }
  return kind_of(path, st);
}

int open_output(const std::string& path, bool truncate) {
  if (check_output(path) == OutputKind::kOwnDescriptor) {
    const int fd = fcntl(own_descriptor(path), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) throw write_failed(path, errno);
    return fd;
  }
  // Non-blocking, so that a FIFO swapped in is opened (and refused) rather than waited on.
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ELOOP) refuse(path, "it is a symbolic link (name the file it points to)");
    if (errno == ENXIO) refuse(path, "it is a FIFO or socket (use - for standard output)");
    throw write_failed(path, errno);
  }
  struct stat st {};
  try {
    if (fstat(fd, &st) != 0) throw write_failed(path, errno);
    if (kind_of(path, st) == OutputKind::kRegular) {
      // A second name of a file another user owns (a hard link planted where fs.protected_hardlinks
      // is off) is not ours to empty.
      if (st.st_nlink > 1 && st.st_uid != geteuid())
        refuse(path, "it is a hard link to a file of uid " + std::to_string(st.st_uid));
      if (truncate && ftruncate(fd, 0) != 0) throw write_failed(path, errno);
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
  } catch (...) {
    close(fd);
    throw;
  }
  return fd;
}

}  // namespace powershape::util
