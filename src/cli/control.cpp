#include "control.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace powershape::cli {

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

ControlFifo::ControlFifo() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp != nullptr ? tmp : "/tmp") + "/powershape.XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    throw std::runtime_error("cannot make a temporary folder in " + templ + ": " +
                             std::strerror(errno));
  }
  dir_ = templ;
  path_ = dir_ + "/control";
  if (mkfifo(path_.c_str(), 0600) != 0) {
    rmdir(dir_.c_str());
    throw std::runtime_error("cannot make FIFO " + path_ + ": " + std::strerror(errno));
  }
  fd_ = open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  keep_open_ = open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);  // no EOF between writers
}

ControlFifo::~ControlFifo() {
  if (keep_open_ >= 0) close(keep_open_);
  if (fd_ >= 0) close(fd_);
  unlink(path_.c_str());
  rmdir(dir_.c_str());
}

std::string ControlFifo::read_available() {
  char buf[4096];
  ssize_t n;
  while ((n = read(fd_, buf, sizeof buf)) > 0) partial_.append(buf, static_cast<std::size_t>(n));
  auto last = partial_.rfind('\n');
  if (last == std::string::npos) return {};
  std::string lines = partial_.substr(0, last + 1);
  partial_.erase(0, last + 1);
  return lines;
}

}  // namespace powershape::cli
