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
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return OutputKind::kAbsent;
    refuse(path, std::strerror(errno));
  }
  return kind_of(path, st);
}

int open_output(const std::string& path, bool truncate) {
  // Non-blocking, so that a FIFO swapped in is opened (and refused) rather than waited on.
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ELOOP) refuse(path, "it is a symbolic link (name the file it points to)");
    if (errno == ENXIO) refuse(path, "it is a FIFO (use - for standard output)");
    refuse(path, std::strerror(errno));
  }
  struct stat st {};
  try {
    if (fstat(fd, &st) != 0) refuse(path, std::strerror(errno));
    if (kind_of(path, st) == OutputKind::kRegular) {
      if (truncate && ftruncate(fd, 0) != 0) refuse(path, std::strerror(errno));
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
  } catch (...) {
    close(fd);
    throw;
  }
  return fd;
}

}  // namespace powershape::util
