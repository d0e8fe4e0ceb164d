#include "powershape/experiment/tune_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_file.hpp"

namespace powershape::experiment {

std::string tune_workload_name(const workload::Workload& w) {
  const bool chunked = std::visit(
      [](const auto& k) {
        if constexpr (std::is_same_v<std::decay_t<decltype(k)>, workload::Custom>) {
          return false;
        } else {
          return std::decay_t<decltype(k)>::kChunked;
        }
      },
      w.kind);
  if (!chunked)
    throw invalid_input("workload",
                        "only a chunked workload is tuned (" + workload::kind_list(true) + ")");
  return workload::kind_name_of(w);
}

std::string tune_cache_path() {
  if (const char* p = std::getenv("POWERSHAPE_CACHE"); p != nullptr && *p != '\0') return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0')
    return std::string(x) + "/powershape/tune.json";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "/tmp") + "/.cache/powershape/tune.json";
}

double device_power_limit_w(const nlohmann::json& device_json) {
  if (device_json.contains("profile"))
    return device_json.at("profile").at("governor").value("power_limit_w", 0.0);
  if (!device_json.contains("device")) return 0;
  const auto& l = device_json.at("device").value("enforced_power_limit_mw", nlohmann::json());
  return l.is_number() ? l.get<double>() / 1000 : 0;
}

std::string tune_key(const nlohmann::json& device_json, const std::string& workload,
                     const std::string& objective) {
  std::string device, driver;
  if (device_json.contains("device")) {
    device = device_json.at("device").value("name", "");
    driver = device_json.at("device").value("driver", "");
  } else if (device_json.contains("profile")) {
    device = "sim:" + device_json.at("profile").value("name", "");
    driver = "simulator";
  } else {
    throw invalid_input("tune_key: no device or profile in the device description");
  }
  const double w = device_power_limit_w(device_json);
  const std::string limit = w > 0 ? std::to_string(std::llround(w)) + " W" : "?";
  return device + " | " + driver + " | " + limit + " | " + workload + " | " + objective;
}

namespace {

// The cache as an object, or nullopt when it is not one (not JSON, another type, too large).
std::optional<nlohmann::json> read_cache(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > kTuneCacheMaxBytes) return std::nullopt;
  try {
    auto j = util::read_json_file(path);
    if (j.is_object()) return j;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// An exclusive flock on PATH.lock, released when this goes; gives up after `wait`.
class CacheLock {
 public:
  CacheLock(const std::string& path, std::chrono::seconds wait) {
    const std::string lock = path + ".lock";
    fd_ = open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0) throw invalid_input("cannot lock " + lock + ": " + std::strerror(errno));
    const auto until = std::chrono::steady_clock::now() + wait;
    while (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK || std::chrono::steady_clock::now() > until) {
        close(fd_);
        throw device_error("cannot lock " + lock + ": another tune holds it");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~CacheLock() { close(fd_); }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_ = -1;
};

std::string utc_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// Drops the entries stored longest ago (those without a time first) down to the bound.
void bound_entries(nlohmann::json& all) {
  while (all.size() > kTuneCacheMaxEntries) {
    auto oldest = all.begin();
    for (auto it = all.begin(); it != all.end(); ++it) {
      if (it->value("stored_s", 0.0) < oldest->value("stored_s", 0.0)) oldest = it;
    }
    all.erase(oldest);
  }
}

}  // namespace

std::optional<int> cached_chunks(const std::string& key) {
  const auto j = read_cache(tune_cache_path());
  if (!j || !j->contains(key) || !j->at(key).is_object() || !j->at(key).contains("chunks"))
    return std::nullopt;
  const auto& c = j->at(key).at("chunks");
  if (!c.is_number_integer() || c.get<int64_t>() < 1 || c.get<int64_t>() > 1'000'000)
    return std::nullopt;
  return static_cast<int>(c.get<int64_t>());
}

std::string store_chunks(const std::string& key, int chunks, const nlohmann::json& detail) {
  const std::string path = tune_cache_path();
  // A regular file or none; /dev/null switches the cache off; a link, a device, a FIFO or a
  // folder is refused before anything is locked, moved or written (output_file.hpp).
  const util::OutputKind kind = util::check_output(path);
  if (kind == util::OutputKind::kNull) return {};
  if (kind == util::OutputKind::kOwnDescriptor)
    throw invalid_input("cannot write " + path + ": a descriptor is no cache file");
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const CacheLock lock(path, std::chrono::seconds(30));
  std::string set_aside;
  nlohmann::json all = nlohmann::json::object();
  if (util::check_output(path) == util::OutputKind::kRegular) {  // again, under the lock
    if (auto j = read_cache(path)) {
      all = std::move(*j);
    } else {
      set_aside = path + ".broken-" + utc_stamp();
      std::filesystem::rename(path, set_aside, ec);
      if (ec) throw invalid_input("cannot move the unreadable " + path + " aside: " + ec.message());
    }
  }
  const double now_s = static_cast<double>(std::time(nullptr));
  all[key] = {{"chunks", chunks}, {"stored_s", now_s}, {"detail", detail}};
  bound_entries(all);
  util::write_json_file(path, all);
  return set_aside;
}

CachedChoice cache_choice(const nlohmann::json& device_json,
                          const std::vector<workload::Plan>& plans, const TuneResult& r,
                          const std::string& objective) {
  CachedChoice c;
  c.key = tune_key(device_json, tune_workload_name(plans.front().workload), objective);
  c.chunks = plans.at(r.chosen).workload.chunks;
  c.aside = store_chunks(c.key, c.chunks, to_json(r)["candidates"]);
  return c;
}

}  // namespace powershape::experiment
