#include "powershape/advise/apply.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "powershape/advise/power_smoothing.hpp"
#include "powershape/advise/restore_record.hpp"
#include "powershape/telemetry/nvml_api.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"

namespace powershape::advise {
namespace fs = std::filesystem;
using nlohmann::json;
namespace nvml = telemetry::nvml;

namespace {

class NvmlTarget : public SettingsTarget {
 public:
  NvmlTarget(int gpu, const std::string& path) : lib_(path), gpu_(gpu) {
    const auto& api = lib_.api();
    unsigned n = 0;
    if (api.DeviceGetCount(&n) != nvml::kSuccess || gpu < 0 || static_cast<unsigned>(gpu) >= n)
      throw invalid_input("no GPU " + std::to_string(gpu) + " (NVML sees " + std::to_string(n) +
                          ")");
    if (api.DeviceGetHandleByIndex(static_cast<unsigned>(gpu), &dev_) != nvml::kSuccess)
      throw device_error("cannot open GPU " + std::to_string(gpu));
  }
  std::string describe() const override { return name() + " (NVML)"; }
  std::string name() const { return "GPU " + std::to_string(gpu_); }
  json snapshot(const Setting& s) override {
    unsigned mw = 0;
    const auto& api = lib_.api();
    if (api.DeviceGetPowerManagementLimit == nullptr ||
        api.DeviceGetPowerManagementLimit(dev_, &mw) != nvml::kSuccess)
      throw device_error("cannot read GPU " + std::to_string(gpu_) +
                         "'s power limit, so it could not be restored; nothing was set");
    json j = {{"target", {{"kind", "nvml"}, {"gpu", gpu_}}},
              {"power_limit_mw", mw},
              {"clock_cap", s.clock_cap_mhz > 0}};
    // Unsupported (an H100) stops it here, before anything is recorded or set.
    if (s.smoothing) {
      const SmoothingStatus now = read_smoothing(api, dev_, name());
      check_smoothing(*s.smoothing, now, name());
      j["power_smoothing"] = smoothing_snapshot(now, *s.smoothing);
      try {  // what the GPU holds now must be what a restore will accept
        check_record(j["power_smoothing"], now, name());
      } catch (const std::exception& e) {
        throw unsupported(name() + "'s power smoothing as found could not be put back (" +
                          e.what() + "); nothing was set");
      }
    }
    return j;
  }
  void set(const Setting& s) override {
    if (!s.power_mode.empty())
      throw unsupported("power modes are a Jetson's (nvpmodel), not NVML's");
    const auto& api = lib_.api();
    if (s.power_limit_w > 0)
      check(api.DeviceSetPowerManagementLimit == nullptr
                ? nvml::kErrorFunctionNotFound
                : api.DeviceSetPowerManagementLimit(
                      dev_, static_cast<unsigned>(std::lround(s.power_limit_w * 1e3))),
            "the power limit");
    if (s.clock_cap_mhz > 0)
      check(api.DeviceSetGpuLockedClocks == nullptr
                ? nvml::kErrorFunctionNotFound
                : api.DeviceSetGpuLockedClocks(dev_, lowest_clock_mhz(),
                                               static_cast<unsigned>(std::lround(s.clock_cap_mhz))),
            "locked SM clocks");
    if (s.smoothing)
      apply_smoothing(api, dev_, name(), *s.smoothing, read_smoothing(api, dev_, name()));
  }
  // A cap, not a lock: the floor is the lowest graphics clock the GPU supports (at its highest
  // memory clock); 0 where NVML cannot list them.
  unsigned lowest_clock_mhz() const {
    const auto& api = lib_.api();
    if (api.DeviceGetSupportedMemoryClocks == nullptr ||
        api.DeviceGetSupportedGraphicsClocks == nullptr)
      return 0;
    unsigned mem[64], n = 64;
    if (api.DeviceGetSupportedMemoryClocks(dev_, &n, mem) != nvml::kSuccess || n == 0) return 0;
    unsigned gfx[512], m = 512;
    const unsigned top = *std::max_element(mem, mem + std::min(n, 64u));
    if (api.DeviceGetSupportedGraphicsClocks(dev_, top, &m, gfx) != nvml::kSuccess || m == 0)
      return 0;
    return *std::min_element(gfx, gfx + std::min(m, 512u));
  }
  void restore(const json& snap) override {
    const auto& api = lib_.api();
    // What the record asks is checked before anything changes.
    std::optional<unsigned> mw;
    if (snap.contains("power_limit_mw")) {
      const auto& v = snap.at("power_limit_mw");
      if (!v.is_number_unsigned() || v.get<uint64_t>() > 10'000'000)
        throw invalid_input("power_limit_mw is not a power limit in mW");
      mw = v.get<unsigned>();
      unsigned lo = 0, hi = 0;
      if (api.DeviceGetPowerManagementLimitConstraints != nullptr &&
          api.DeviceGetPowerManagementLimitConstraints(dev_, &lo, &hi) == nvml::kSuccess &&
          (*mw < lo || *mw > hi)) {
        throw invalid_input("power_limit_mw " + std::to_string(*mw) + " is outside GPU " +
                            std::to_string(gpu_) + "'s range " + std::to_string(lo) + ".." +
                            std::to_string(hi));
      }
    }
    // Each part is put back even when one before it failed; the first failure is then thrown
    // (the record stays for the next run). Power smoothing checks its part before it sets any.
    std::exception_ptr first;
    const auto step = [&](const std::function<void()>& f) {
      try {
        f();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    };
    if (snap.contains("power_smoothing"))
      step([&] { restore_smoothing(api, dev_, name(), snap.at("power_smoothing")); });
    // A record from before "clock_cap" was written held a cap or a limit: both are put back.
    const bool capped = snap.value("clock_cap", json(true)) != json(false);
    if (capped && api.DeviceResetGpuLockedClocks != nullptr)
      step([&] { check(api.DeviceResetGpuLockedClocks(dev_), "the SM clocks back"); });
    if (mw && api.DeviceSetPowerManagementLimit != nullptr)
      step([&] { check(api.DeviceSetPowerManagementLimit(dev_, *mw), "the power limit back"); });
    if (first) std::rethrow_exception(first);
  }

 private:
  void check(nvml::Return r, const std::string& what) const {
    if (r == nvml::kSuccess) return;
    if (r == nvml::kErrorNoPermission)
      throw device_error("setting " + what + " on GPU " + std::to_string(gpu_) +
                         " needs root or CAP_SYS_ADMIN (NVML: " + lib_.api().error_string(r) + ")");
    if (r == nvml::kErrorNotSupported)
      throw unsupported("GPU " + std::to_string(gpu_) + " cannot set " + what +
                        " (NVML: " + lib_.api().error_string(r) + ")");
    throw device_error("setting " + what + " on GPU " + std::to_string(gpu_) +
                       " failed (NVML: " + lib_.api().error_string(r) + ")");
  }
  nvml::Library lib_;
  int gpu_;
  nvml::Device dev_ = nullptr;
};

std::string read_line(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  if (!in || !std::getline(in, s)) throw device_error("cannot read " + p.string());
  return s;
}

// A sysfs attribute: written in place, never created, never through a symbolic link.
void write_line(const fs::path& p, const std::string& v) {
  const int fd = open(p.c_str(), O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
  const std::string line = v + "\n";
  const bool ok =
      fd >= 0 && write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  const int err = errno;
  if (fd >= 0) close(fd);
  if (!ok) {
    throw device_error("cannot write " + p.string() +
                       (err == EACCES || err == EPERM ? " (needs root)"
                        : err == ELOOP                ? " (a symbolic link)"
                                                      : ": " + std::string(std::strerror(err))));
  }
}

// A command's standard output, or nullopt when it cannot run or fails.
std::optional<std::string> output_of(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (p == nullptr) return std::nullopt;
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  return pclose(p) == 0 ? std::optional<std::string>(out) : std::nullopt;
}

// nvpmodel: $POWERSHAPE_NVPMODEL, else the one on PATH.
std::string nvpmodel() {
  const char* env = std::getenv("POWERSHAPE_NVPMODEL");
  return env != nullptr ? env : "nvpmodel";
}

// The AGX Orin's nvpmodel mode ids (L4T's /etc/nvpmodel.conf for the 64 GB module).
int mode_id(const std::string& name) {
  static const std::pair<const char*, int> kModes[] = {
      {"MAXN", 0}, {"15W", 1}, {"30W", 2}, {"50W", 3}};
  for (const auto& [n, id] : kModes)
    if (name == n) return id;
  throw invalid_input("no nvpmodel mode '" + name + "' (MAXN, 15W, 30W, 50W)");
}

// The mode `nvpmodel -q` reports (its last line is the id), or -1 when it cannot say.
int current_mode() {
  const auto out = output_of(nvpmodel() + " -q");
  if (!out) return -1;
  std::istringstream lines(*out);
  std::string line;
  int id = -1;
  while (std::getline(lines, line)) {
    char* end = nullptr;
    const long v = std::strtol(line.c_str(), &end, 10);
    if (end != line.c_str() && *end == '\0' && v >= 0 && v < 100) id = static_cast<int>(v);
  }
  return id;
}

void set_mode(int id) {
  if (!output_of(nvpmodel() + " -m " + std::to_string(id)))
    throw device_error("`" + nvpmodel() + " -m " + std::to_string(id) +
                       "` failed (it needs root; a mode that needs a reboot is refused)");
}

// A Jetson: its GPU devfreq for the clock cap, nvpmodel for the power mode.
class JetsonTarget : public SettingsTarget {
 public:
  explicit JetsonTarget(std::string dir) : dir_(std::move(dir)) {
    if (!fs::exists(fs::path(dir_) / "max_freq"))
      throw invalid_input(dir_ + " is not a devfreq folder (no max_freq)");
  }
  std::string describe() const override { return "Jetson GPU (" + dir_ + ")"; }
  json snapshot(const Setting& s) override {
    if (s.smoothing)
      throw unsupported("a Jetson has no power smoothing (Blackwell's, set by NVML)");
    json j = {{"target", {{"kind", "devfreq"}, {"dir", dir_}}},
              {"max_freq", read_line(fs::path(dir_) / "max_freq")}};
    if (const int mode = current_mode(); mode >= 0) j["nvpmodel_mode"] = mode;
    return j;
  }
  void set(const Setting& s) override {
    if (s.power_limit_w > 0)
      throw invalid_input("a Jetson's power budget is its nvpmodel mode; give a mode, not a limit");
    if (!s.power_mode.empty()) {
      const int id = mode_id(s.power_mode);
      if (current_mode() < 0)
        throw device_error("cannot read the current mode with `" + nvpmodel() +
                           " -q`, so it could not be restored; nothing was set");
      set_mode(id);
    }
    if (s.clock_cap_mhz <= 0) return;
    // The highest available frequency at or under the cap (devfreq rounds otherwise).
    long long best = 0, lowest = 0;
    std::ifstream in(fs::path(dir_) / "available_frequencies");
    for (long long hz = 0; in >> hz;) {
      if (lowest == 0 || hz < lowest) lowest = hz;
      if (hz <= s.clock_cap_mhz * 1e6 + 0.5 && hz > best) best = hz;
    }
    if (best == 0) best = lowest;
    if (best == 0) best = std::llround(s.clock_cap_mhz * 1e6);
    write_line(fs::path(dir_) / "max_freq", std::to_string(best));
  }
  void restore(const json& snap) override {
    const auto& f = snap.value("max_freq", json());
    const std::string hz = f.is_string() ? f.get<std::string>() : "";
    if (hz.empty() || hz.size() > 15 || hz.find_first_not_of("0123456789") != std::string::npos)
      throw invalid_input("max_freq is not a frequency in Hz");
    if (snap.contains("nvpmodel_mode")) {
      const auto& m = snap.at("nvpmodel_mode");
      if (!m.is_number_integer() || m.get<int64_t>() < 0 || m.get<int64_t>() > 99)
        throw invalid_input("nvpmodel_mode is not a mode id");
      const int was = m.get<int>();
      if (current_mode() != was) set_mode(was);
    }
    write_line(fs::path(dir_) / "max_freq", hz);
  }

 private:
  std::string dir_;
};

std::string record_name(const json& target) {
  std::string s = target.dump();
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return "restore-" + out.substr(0, 120) + ".json";
}

}  // namespace

std::unique_ptr<SettingsTarget> nvml_target(int gpu, const std::string& nvml_path) {
  return std::make_unique<NvmlTarget>(gpu, nvml_path);
}

std::unique_ptr<SettingsTarget> devfreq_target(const std::string& dir) {
  return std::make_unique<JetsonTarget>(dir);
}

std::string find_jetson_devfreq(const std::string& sysfs_root) {
  for (const char* rel : {"devices/platform/17000000.ga10b/devfreq/17000000.ga10b",
                          "devices/platform/bus@0/17000000.gpu/devfreq/17000000.gpu"}) {
    const fs::path p = fs::path(sysfs_root) / rel;
    if (fs::exists(p / "max_freq")) return p.string();
  }
  return "";
}

std::string state_dir() {
  if (const char* d = std::getenv("POWERSHAPE_STATE_DIR")) return d;
  if (geteuid() == 0) return "/var/lib/powershape";
  if (const char* x = std::getenv("XDG_STATE_HOME")) return std::string(x) + "/powershape";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "/tmp") + "/.local/state/powershape";
}

Applied::Applied(SettingsTarget& target, const Setting& s, const std::string& record_dir)
    : target_(target) {
  snapshot_ = target_.snapshot(s);
  const Holder me = this_process();
  snapshot_["pid"] = me.pid;
  snapshot_["holder"] = to_json(me);
  snapshot_["setting"] = s.describe();
  prepare_state_dir(record_dir);
  record_ = (fs::path(record_dir) / record_name(snapshot_.at("target"))).string();
  if (!create_record(record_, snapshot_)) {  // before anything changes; exclusive: the hold
    json old;
    try {
      old = read_record(record_);
    } catch (const std::runtime_error& e) {
      throw invalid_input(std::string(e.what()) + "; a forced restore removes it")
          .with(Remedy::kForcedRestore);
    }
    if (const auto h = holder_of(old); h && still_running(*h))
      throw device_error(target_.describe() + " is held by powershape (pid " +
                         std::to_string(h->pid) + ", " + record_ + ")");
    throw device_error(record_ +
                       " is left from a run that did not finish; a restore puts that setting "
                       "back first")
        .with(Remedy::kRestore);
  }
  held_ = true;
  try {
    target_.set(s);
  } catch (...) {
    restore();
    throw;
  }
}

Applied::~Applied() {
  try {
    restore();
  } catch (const std::exception&) {
    // The record stays; the next run's restore_leftovers retries it.
  }
}

void Applied::restore() {
  if (!held_) return;
  target_.restore(snapshot_);
  held_ = false;
  std::error_code ec;
  fs::remove(record_, ec);
}

std::unique_ptr<SettingsTarget> open_target(const json& target, const std::string& nvml_path,
                                            const std::string& sysfs_root) {
  const std::string kind = target.value("kind", "");
  if (kind == "nvml") {
    const auto& gpu = target.value("gpu", json());
    if (!gpu.is_number_integer()) throw invalid_input("target: gpu is not an index");
    return nvml_target(gpu.get<int>(), nvml_path);
  }
  if (kind == "devfreq") {
    // Only this machine's Jetson GPU devfreq folder, resolved: never a path the record makes up.
    const auto& dir = target.value("dir", json());
    const std::string ours = find_jetson_devfreq(sysfs_root);
    std::error_code e1, e2;
    if (!dir.is_string() || ours.empty() ||
        fs::canonical(dir.get<std::string>(), e1) != fs::canonical(ours, e2) || e1 || e2) {
      throw invalid_input("target: " + (dir.is_string() ? dir.get<std::string>() : "?") +
                          " is not this machine's Jetson GPU devfreq folder under " + sysfs_root);
    }
    return devfreq_target(fs::canonical(ours).string());
  }
  throw invalid_input("target: unknown kind '" + kind + "'");
}

std::vector<std::string> restore_leftovers(
    const std::string& record_dir,
    const std::function<std::unique_ptr<SettingsTarget>(const json&)>& open, bool force) {
  std::vector<std::string> done, problems;
  std::error_code ec;
  if (!fs::exists(record_dir, ec) && !fs::is_symlink(record_dir, ec)) return done;
  prepare_state_dir(record_dir);
  std::vector<fs::path> records;
  for (const auto& e : fs::directory_iterator(record_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("restore-", 0) == 0 && e.path().extension() == ".json")
      records.push_back(e.path());
  }
  std::sort(records.begin(), records.end());
  for (const auto& path : records) {
    try {
      const json rec = read_record(path.string());
      const auto h = holder_of(rec);
      if (h && still_running(*h) && h->pid != this_process().pid) {
        done.push_back(path.string() + ": held by powershape pid " + std::to_string(h->pid) +
                       ", still running; left to it");
        continue;
      }
      auto target = open(rec.at("target"));
      try {
        target->restore(rec);
      } catch (const std::runtime_error& x) {
        rethrow_with("record " + path.string() + ": ", x);
      }
      done.push_back(target->describe() + ": restored what it was before '" +
                     rec.value("setting", std::string("?")) + "' (pid " +
                     std::to_string(h ? h->pid : rec.value("pid", 0L)) + " did not finish)");
    } catch (const std::runtime_error& x) {
      std::string why = x.what();
      if (why.rfind("record ", 0) != 0) why = "record " + path.string() + ": " + why;
      if (!force) {
        problems.push_back(why);
        continue;
      }
      done.push_back("removed " + path.string() + " without restoring it (" + why + ")");
    }
    fs::remove(path, ec);
  }
  if (!problems.empty()) {
    throw invalid_input(
        problems.front() +
        (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : "") +
        "; fix or remove it, or a forced restore drops what cannot be restored")
        .with(Remedy::kForcedRestore);
  }
  return done;
}

}  // namespace powershape::advise
