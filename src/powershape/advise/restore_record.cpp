#include "powershape/advise/restore_record.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"

namespace powershape::advise {
namespace {

constexpr off_t kMaxRecordBytes = 64 * 1024;

std::string octal(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

// /proc/PID/stat's 22nd field; 0 when the process is gone. The command name (field 2) may hold
// spaces and parentheses, so fields are counted after its last ')'.
unsigned long long start_ticks_of(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i < 22 && rest >> field; ++i) {
  }
  unsigned long long ticks = 0;
  rest >> ticks;
  return ticks;
}

}  // namespace

Holder this_process() {
  const long pid = static_cast<long>(getpid());
  return {pid, start_ticks_of(pid)};
}

bool still_running(const Holder& h) {
  return h.pid > 0 && h.start_ticks > 0 && start_ticks_of(h.pid) == h.start_ticks;
}

nlohmann::json to_json(const Holder& h) { return {{"pid", h.pid}, {"start_ticks", h.start_ticks}}; }

std::optional<Holder> holder_of(const nlohmann::json& record) {
  if (!record.contains("holder") || !record.at("holder").is_object()) return std::nullopt;
  const auto& j = record.at("holder");
  if (!j.value("pid", nlohmann::json()).is_number_integer() ||
      !j.value("start_ticks", nlohmann::json()).is_number_unsigned())
    return std::nullopt;
  return Holder{j.at("pid").get<long>(), j.at("start_ticks").get<unsigned long long>()};
}

void prepare_state_dir(const std::string& dir) {
  // Its missing parents are made no wider than 0755 whatever the umask (under umask 000 they were
  // 0777, and another user could move the records away, so that a crashed run's setting was never
  // put back); a parent anyone can write to, and that is not sticky, is refused (a group-writable
  // one is not: under Debian's user-private groups ~/.local/state is 0775).
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  std::filesystem::path at;
  for (const auto& part : parent) {
    at /= part;
    if (mkdir(at.c_str(), 0755) != 0 && errno != EEXIST)
      throw device_error("cannot create " + at.string() + ": " + std::strerror(errno));
  }
  struct stat up {};
  if (!parent.empty() && stat(parent.c_str(), &up) == 0 && (up.st_mode & 002) != 0 &&
      (up.st_mode & S_ISVTX) == 0)
    throw invalid_input("the state folder's parent " + parent.string() +
                        " is writable by anyone (mode " + octal(up.st_mode) +
                        "): its restore records could be moved away; chmod o-w it");
  if (mkdir(dir.c_str(), 0700) == 0) {
    if (chmod(dir.c_str(), 0700) != 0)  // a umask cannot leave it unusable
      throw device_error("cannot set the mode of " + dir + ": " + std::strerror(errno));
  } else if (errno != EEXIST) {
    throw device_error("cannot create the state folder " + dir + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0)
    throw device_error("cannot read the state folder " + dir + ": " + std::strerror(errno));
  const auto refuse = [&](const std::string& why) {
    throw invalid_input("the state folder " + dir + " " + why +
                        ": its restore records could be anyone's; refusing to act on them");
  };
  if (S_ISLNK(st.st_mode)) refuse("is a symbolic link");
  if (!S_ISDIR(st.st_mode)) refuse("is not a folder");
  if (st.st_uid != geteuid()) refuse("belongs to uid " + std::to_string(st.st_uid));
  if ((st.st_mode & 022) != 0)
    refuse("is writable by others (mode " + octal(st.st_mode) + "; chmod 700 it)");
}

nlohmann::json read_record(const std::string& path) {
  const auto bad = [&](const std::string& why) {
    throw invalid_input("record " + path + ": " + why);
  };
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) bad(errno == ELOOP ? "a symbolic link" : std::strerror(errno));
  struct stat st {};
  std::string text;
  const bool stat_ok = fstat(fd, &st) == 0;
  if (stat_ok && S_ISREG(st.st_mode) && st.st_size <= kMaxRecordBytes) {
    text.resize(static_cast<std::size_t>(st.st_size));
    const ssize_t n = read(fd, text.data(), text.size());
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  close(fd);
  if (!stat_ok) bad(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) bad("not a regular file");
  if (st.st_uid != geteuid())
    bad("belongs to uid " + std::to_string(st.st_uid) + ", not to this user");
  if ((st.st_mode & 022) != 0) bad("writable by others (mode " + octal(st.st_mode) + ")");
  if (st.st_nlink != 1) bad("has " + std::to_string(st.st_nlink) + " links");
  if (st.st_size > kMaxRecordBytes)
    bad("larger than a record (" + std::to_string(st.st_size) + " bytes)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    bad("not JSON (" + util::strip_json_code(e.what()) + ")");
  }
  if (!j.is_object() || !j.contains("target") || !j.at("target").is_object())
    bad("not a restore record (no target)");
  return j;
}

bool create_record(const std::string& path, const nlohmann::json& record) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw device_error("cannot write " + path + ": " + std::strerror(errno));
  }
  const std::string text = record.dump(1) + "\n";
  const bool ok = fchmod(fd, 0600) == 0 &&
                  write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  fsync(fd) == 0;
  const int err = errno;
  close(fd);
  if (!ok) {
    unlink(path.c_str());
    throw device_error("cannot write " + path + ": " + std::strerror(err));
  }
  return true;
}

}  // namespace powershape::advise
