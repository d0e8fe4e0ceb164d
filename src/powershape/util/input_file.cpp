#include "powershape/util/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "powershape/util/error.hpp"

namespace powershape::util {

void open_input(const std::string& path, std::ifstream& in) {
  const auto refuse = [&](const std::string& why) {
    throw invalid_input("cannot read " + path + ": " + why);
  };
  // Non-blocking: a FIFO without a writer is opened (and refused), not waited on.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) refuse(std::strerror(errno));
  struct stat st {};
  const int got = fstat(fd, &st);
  if (got == 0 && S_ISREG(st.st_mode)) {
    in.open("/proc/self/fd/" + std::to_string(fd));  // the same file, blocking, as a stream
    if (!in) in.open(path);  // no /proc here (a sandbox): the path, checked just before
    const int err = errno;
    close(fd);
    if (!in) refuse(std::strerror(err));
    return;
  }
  close(fd);
  if (got != 0) refuse(std::strerror(errno));
  if (S_ISDIR(st.st_mode)) refuse("it is a folder");
  if (S_ISFIFO(st.st_mode)) refuse("it is a FIFO, not a file");
  refuse("it is a device or socket, not a file");
}

}  // namespace powershape::util
