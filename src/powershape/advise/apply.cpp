#include "powershape/advise/apply.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>

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
  std::string describe() const override { return "GPU " + std::to_string(gpu_) + " (NVML)"; }
  json snapshot() override {
    unsigned mw = 0;
    const auto& api = lib_.api();
    if (api.DeviceGetPowerManagementLimit == nullptr ||
        api.DeviceGetPowerManagementLimit(dev_, &mw) != nvml::kSuccess)
      throw device_error("cannot read GPU " + std::to_string(gpu_) +
                         "'s power limit, so it could not be restored; nothing was set");
    return {{"target", {{"kind", "nvml"}, {"gpu", gpu_}}}, {"power_limit_mw", mw}};
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
    if (api.DeviceResetGpuLockedClocks != nullptr)
      check(api.DeviceResetGpuLockedClocks(dev_), "the SM clocks back");
    if (snap.contains("power_limit_mw") && api.DeviceSetPowerManagementLimit != nullptr)
      check(api.DeviceSetPowerManagementLimit(dev_, snap.at("power_limit_mw").get<unsigned>()),
            "the power limit back");
  }

 private:
  void check(nvml::Return r, const std::string& what) const {
    if (r == nvml::kSuccess) return;
    if (r == nvml::kErrorNoPermission)
      throw device_error("setting " + what + " on GPU " + std::to_string(gpu_) +
                         " needs root or CAP_SYS_ADMIN (NVML: " + lib_.api().error_string(r) + ")");
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

void write_line(const fs::path& p, const std::string& v) {
  std::ofstream out(p, std::ios::trunc);
  out << v << '\n';
  out.flush();
  if (!out) {
    throw device_error("cannot write " + p.string() +
                       (errno == EACCES || errno == EPERM ? " (needs root)" : ""));
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
  json snapshot() override {
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
    if (snap.contains("nvpmodel_mode")) {
      const int was = snap.at("nvpmodel_mode").get<int>();
      if (current_mode() != was) set_mode(was);
    }
    write_line(fs::path(dir_) / "max_freq", snap.at("max_freq").get<std::string>());
  }

 private:
  std::string dir_;
};

bool alive(long pid) {
  return pid > 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

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
  snapshot_ = target_.snapshot();
  snapshot_["pid"] = static_cast<long>(getpid());
  snapshot_["setting"] = s.describe();
  std::error_code ec;
  fs::create_directories(record_dir, ec);
  record_ = (fs::path(record_dir) / record_name(snapshot_.at("target"))).string();
  if (fs::exists(record_)) {
    const json old = util::read_json_file(record_);
    if (alive(old.value("pid", 0L)))
      throw device_error(target_.describe() + " is held by powershape (pid " +
                         std::to_string(old.value("pid", 0L)) + ", " + record_ + ")");
    throw device_error(record_ +
                       " is left from a run that did not finish; `powershape advise "
                       "--restore` puts that setting back first");
  }
  util::write_json_file(record_, snapshot_);  // before anything changes
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

std::unique_ptr<SettingsTarget> open_target(const json& target, const std::string& nvml_path) {
  const std::string kind = target.value("kind", "");
  if (kind == "nvml") return nvml_target(target.value("gpu", 0), nvml_path);
  if (kind == "devfreq") return devfreq_target(target.value("dir", ""));
  throw invalid_input("restore record: unknown target kind '" + kind + "'");
}

std::vector<std::string> restore_leftovers(
    const std::string& record_dir,
    const std::function<std::unique_ptr<SettingsTarget>(const json&)>& open) {
  std::vector<std::string> done;
  std::error_code ec;
  if (!fs::is_directory(record_dir, ec)) return done;
  for (const auto& e : fs::directory_iterator(record_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("restore-", 0) != 0 || e.path().extension() != ".json") continue;
    json rec;
    try {
      rec = util::read_json_file(e.path().string());
      if (alive(rec.value("pid", 0L)) && rec.value("pid", 0L) != static_cast<long>(getpid()))
        continue;  // a run still holding its setting
      auto target = open(rec.at("target"));
      target->restore(rec);
      done.push_back(target->describe() + ": restored what it was before '" +
                     rec.value("setting", std::string("?")) + "' (pid " +
                     std::to_string(rec.value("pid", 0L)) + " did not finish)");
    } catch (const nlohmann::json::exception& x) {
      throw device_error(e.path().string() + ": not a restore record (" +
                         util::strip_json_code(x.what()) + ")");
    }
    fs::remove(e.path(), ec);
  }
  return done;
}

}  // namespace powershape::advise
