#include "powershape/telemetry/mark.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::telemetry {

std::optional<Mark> parse_mark(const std::string& line) {
  auto s1 = line.find(' ');
  if (s1 == std::string::npos) return std::nullopt;
  auto s2 = line.find(' ', s1 + 1);
  if (s2 == std::string::npos || s2 + 1 >= line.size()) return std::nullopt;
  std::string verb = line.substr(0, s1);
  if (verb != "begin" && verb != "end") return std::nullopt;
  int64_t t = 0;
  auto [p, ec] = std::from_chars(line.data() + s1 + 1, line.data() + s2, t);
  if (ec != std::errc() || p != line.data() + s2) return std::nullopt;
  return Mark{verb == "begin", t, line.substr(s2 + 1)};
}

std::string format_mark(const Mark& m) {
  return (m.begin ? "begin " : "end ") + std::to_string(m.t_ns) + " " + m.name + "\n";
}

void send_mark(const std::string& path, const Mark& m) {
  const std::string line = format_mark(m);
  // Only a FIFO, never through a link: a recorder passes marks on to whatever path its
  // environment names, and may run as root. The path is looked at without being opened (O_PATH),
  // so that not even a device's open runs, and then the FIFO found is opened through it.
  const int at = open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (at < 0) throw device_error("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(at, &st) != 0 || !S_ISFIFO(st.st_mode)) {
    close(at);
    throw invalid_input(path + " is not a FIFO: no mark is written to it");
  }
  // A recorder's FIFO is its user's. One that another user planted (a finished monitor's folder
  // made again) would be handed the region names of whoever marks, root's included.
  if (st.st_uid != geteuid() && st.st_uid != getuid() && st.st_uid != 0) {
    close(at);
    throw invalid_input(path + " belongs to uid " + std::to_string(st.st_uid) +
                        ", not to you: no mark is written to it");
  }
  const int fd =
      open(("/proc/self/fd/" + std::to_string(at)).c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  const int err = errno;
  close(at);
  if (fd < 0) throw device_error("cannot open " + path + ": " + std::strerror(err));
  const ssize_t n = write(fd, line.data(), line.size());
  close(fd);
  if (n != static_cast<ssize_t>(line.size())) throw device_error("cannot write " + path);
}

}  // namespace powershape::telemetry
