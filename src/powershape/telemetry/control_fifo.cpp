#include "powershape/telemetry/control_fifo.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::telemetry {

namespace {

constexpr const char* kPrefix = "powershape.";

// Folders of monitors that were killed (SIGKILL runs no destructor) are removed by the next one:
// each folder is named powershape.PID.XXXXXX, and one whose PID no longer runs is stale.
void remove_stale_folders(const std::string& tmp) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(tmp, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0) continue;
    const std::string rest = name.substr(std::strlen(kPrefix));
    long pid = 0;
    auto [p, err] = std::from_chars(rest.data(), rest.data() + rest.size(), pid);
    if (err != std::errc() || p == rest.data() || *p != '.' || pid <= 0) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours
    struct stat st {};
    if (lstat(e.path().c_str(), &st) != 0 || st.st_uid != getuid()) continue;
    std::filesystem::remove_all(e.path(), ec);
  }
}

}  // namespace

ControlFifo::ControlFifo() {
  const char* env = std::getenv("TMPDIR");
  const std::string tmp = env != nullptr ? env : "/tmp";
  remove_stale_folders(tmp);
  std::string templ = tmp + "/" + kPrefix + std::to_string(getpid()) + ".XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    throw device_error("cannot make a temporary folder in " + templ + ": " + std::strerror(errno));
  }
  dir_ = templ;
  path_ = dir_ + "/control";
  if (mkfifo(path_.c_str(), 0600) != 0) {
    rmdir(dir_.c_str());
    throw device_error("cannot make FIFO " + path_ + ": " + std::strerror(errno));
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
  std::size_t got = 0;
  while (got < kMaxRead && (n = read(fd_, buf, sizeof buf)) > 0) {
    partial_.append(buf, static_cast<std::size_t>(n));
    got += static_cast<std::size_t>(n);
  }
  auto last = partial_.rfind('\n');
  if (last == std::string::npos) {
    if (partial_.size() > kMaxLine) partial_.clear();
    return {};
  }
  std::string lines = partial_.substr(0, last + 1);
  partial_.erase(0, last + 1);
  return lines;
}

}  // namespace powershape::telemetry
