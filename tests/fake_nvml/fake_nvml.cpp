// A fake libnvidia-ml.so.1 that replays a recorded trace and injects faults, so that the real
// dlopen path of NvmlSource is what the tests exercise. Configured at nvmlInit from:
//   POWERSHAPE_FAKE_NVML_TRACE   trace CSV to replay (required)
//   POWERSHAPE_FAKE_NVML_SPEED   replay speed (default 1)
//   POWERSHAPE_FAKE_NVML_GPUS    N: a node of N GPUs, each replaying the trace's GPU 0 (1-64)
//   POWERSHAPE_FAKE_NVML_SETTINGS  a file holding what the setters set ("GPU limit_mw min_mhz
//                                max_mhz" lines; locked clocks 0 0 when none), read by the getters,
//                                so that a test sees what one process left for the next
//   POWERSHAPE_FAKE_NVML_PROCESSES  PID:SM[,PID:SM...]: every GPU's per-process samples, each
//                                process busy SM% of the time, sampled every 1/6 s from the start;
//                                without it, the driver has sampled no process
//   POWERSHAPE_FAKE_NVML_FAULTS  comma list of (DCGM's nvml-injection injects the same classes):
//     no_driver                  nvmlInit fails
//     unsupported=SIGNAL, error=SIGNAL   that signal reads NOT_SUPPORTED / UNKNOWN_ERROR
//     code=FUNC:RET[:N]          FUNC returns RET (a number, or timeout, no_permission,
//                                insufficient_size, unknown, gpu_lost, not_supported), for its
//                                first N calls when N is given (a fault that recovers), else always
//     slow=FUNC:US, slow_us=US   FUNC (or every call) takes US microseconds longer
//     cpu=FUNC:US                FUNC burns US microseconds of the caller's CPU, as a driver's
//                                ioctl does (a sleep costs no CPU)
//     h200_costs                 every sampling call burns the CPU it takes on an H200 with driver
//                                580 inside the sampler: ~2 us each, a HW throttle counter field
//                                580 us more, the energy counter 2900 us, a fetch of the power
//                                buffer 700 us (data/h200/sampler_stretch, docs/telemetry.md)
//     hang=FUNC:AFTER_MS[:GPU]   FUNC's first call after AFTER_MS (on GPU, default any) never
//     returns lost_after_ms=N[,back_after_ms=M]  the GPU is lost from N ms (and back from M ms)
//     energy_wrap                the energy counter starts 1 J below 2^64 and wraps
//     energy_reset_after_ms=N    the energy counter restarts from 0 at N ms (a driver reload)
//     energy_jitter              every other energy read is 1 mJ behind the one before it
//     energy_leap_after_ms=N     the energy counter leaps 2^60 mJ ahead at N ms (a glitch)
//     power_glitch               every 5th power_usage read is 2^32-1 mW (4 MW)
//     no_samples                 the driver's power buffer is unsupported
//     odd_samples                the power buffer repeats, reorders, and dates samples in the
//                                future (by an hour) and at 0
//     skipped_samples            the power buffer skips two samples in every 7 (a 60 ms step;
//                                an H100's driver leaves 43 ms steps now and then)
//   FUNC: count, handle, name, uuid, driver_version, power_limit, enforced_limit, constraints,
//   max_clock, threshold, power_usage, energy, clock, temperature, reasons, utilization, fields,
//   samples, processes, supported_clocks, set_power_limit, set_clocks, reset_clocks,
//   smoothing_state, smoothing_profile, smoothing_param. POWERSHAPE_FAKE_NVML_SMOOTHING  a file
//   holding Blackwell's power smoothing (fake_smoothing.hpp);
//                                without it the GPUs have none
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fake_smoothing.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/telemetry/nvml_api.hpp"
#include "powershape/trace/csv_reader.hpp"

using powershape::telemetry::Reading;
using powershape::telemetry::Signal;
using powershape::telemetry::Status;
namespace nvml = powershape::telemetry::nvml;

namespace {

struct Fault {
  int code = 0;               // returned instead of success; 0: none
  long remaining = -1;        // calls left that fail; -1: every call
  long slow_us = 0;           // added latency
  long cpu_us = 0;            // CPU burnt
  double hang_after_ms = -1;  // the first call from then on never returns; -1: none
  int hang_gpu = -1;          // only on this GPU; -1: any
};

struct State {
  powershape::trace::Trace trace;
  std::map<std::string, Fault> faults;  // by FUNC
  std::mutex mu;                        // guards faults (calls come from several threads)
  double back_after_ms = -1, energy_reset_after_ms = -1;
  bool energy_jitter = false, odd_samples = false, skipped_samples = false;
  long energy_reads = 0, power_reads = 0;
  double energy_leap_after_ms = -1;
  bool power_glitch = false;
  std::vector<std::vector<const powershape::trace::Sample*>> rows;  // per GPU, by time
  double speed = 1;
  std::set<Signal> unsupported, failing;
  double lost_after_ms = -1;
  bool energy_wrap = false, no_samples = false, h200_costs = false;
  std::vector<std::pair<unsigned, unsigned>> processes;  // pid, SM%
  long slow_us = 0;
  std::chrono::steady_clock::time_point start;
  long long start_realtime_us = 0;
  int64_t t0_ns = 0;
};
std::unique_ptr<State> g;

double elapsed_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g->start)
      .count();
}

void slow() {
  if (g && g->slow_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(g->slow_us));
}

// Burns `us` microseconds of the calling thread's CPU (its own clock: a thread descheduled on a
// loaded machine still burns all of it).
void spin(long us) {
  const int64_t end = powershape::telemetry::thread_cpu_ns() + int64_t{us} * 1000;
  while (us > 0 && powershape::telemetry::thread_cpu_ns() < end) {
  }
}

int index_of(nvml::Device d) { return static_cast<int>(reinterpret_cast<intptr_t>(d)) - 1; }

// The fault of FUNC on this call, after its latency; a hang does not return.
nvml::Return inject(const char* fn, int gpu = -1) {
  if (!g) return nvml::kSuccess;
  long sleep_us = 0, cpu_us = 0;
  bool hang = false;
  nvml::Return r = nvml::kSuccess;
  {
    std::lock_guard lock(g->mu);
    auto it = g->faults.find(fn);
    if (it == g->faults.end()) return nvml::kSuccess;
    Fault& f = it->second;
    sleep_us = f.slow_us;
    cpu_us = f.cpu_us;
    if (f.hang_after_ms >= 0 && elapsed_ms() >= f.hang_after_ms &&
        (f.hang_gpu < 0 || f.hang_gpu == gpu)) {
      f.hang_after_ms = -1;
      hang = true;
    }
    if (f.code != 0 && f.remaining != 0) {
      if (f.remaining > 0) --f.remaining;
      r = f.code;
    }
  }
  if (sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
  spin(cpu_us);
  while (hang) std::this_thread::sleep_for(std::chrono::seconds(1));  // a driver call stuck
  return r;
}

bool lost_now() {
  const double t = elapsed_ms();
  return g->lost_after_ms >= 0 && t > g->lost_after_ms &&
         !(g->back_after_ms >= 0 && t > g->back_after_ms);
}

bool valid(nvml::Device d) {
  return g && index_of(d) >= 0 && index_of(d) < static_cast<int>(g->rows.size());
}

// The reading of `s` in force at replay time `t_ns` (trace clock): the last row at or before it
// that has the signal.
Reading at(int gpu, Signal s, int64_t t_ns) {
  const auto& rows = g->rows[static_cast<std::size_t>(gpu)];
  auto it =
      std::upper_bound(rows.begin(), rows.end(), t_ns,
                       [](int64_t t, const powershape::trace::Sample* r) { return t < r->t_ns; });
  while (it != rows.begin()) {
    --it;
    if ((**it)[s].status != Status::kNotRead) return (**it)[s];
  }
  return Reading::failed(Status::kNotSupported);
}

// What the setters set, kept in POWERSHAPE_FAKE_NVML_SETTINGS (none: nothing can be set).
struct Settings {
  unsigned limit_mw = 0, min_mhz = 0, max_mhz = 0;
};
std::map<int, Settings> read_settings() {
  std::map<int, Settings> out;
  const char* path = std::getenv("POWERSHAPE_FAKE_NVML_SETTINGS");
  if (path == nullptr) return out;
  std::ifstream in(path);
  int gpu = 0;
  Settings s;
  while (in >> gpu >> s.limit_mw >> s.min_mhz >> s.max_mhz) out[gpu] = s;
  return out;
}
Settings settings_of(int gpu) {
  auto all = read_settings();
  auto it = all.find(gpu);
  return it == all.end() ? Settings{} : it->second;
}
void store_settings(int gpu, const Settings& s) {
  const char* path = std::getenv("POWERSHAPE_FAKE_NVML_SETTINGS");
  if (path == nullptr) return;
  auto all = read_settings();
  all[gpu] = s;
  std::ofstream out(path, std::ios::trunc);
  for (const auto& [g, x] : all)
    out << g << ' ' << x.limit_mw << ' ' << x.min_mhz << ' ' << x.max_mhz << '\n';
}

int64_t now_trace_ns() { return g->t0_ns + static_cast<int64_t>(elapsed_ms() * 1e6 * g->speed); }

nvml::Return read(nvml::Device d, Signal s, int64_t& out) {
  slow();
  if (!valid(d)) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  if (lost_now()) return nvml::kErrorGpuIsLost;
  if (g->unsupported.count(s)) return nvml::kErrorNotSupported;
  if (g->failing.count(s)) return nvml::kErrorUnknown;
  Reading r = at(index_of(d), s, now_trace_ns());
  if (!r.ok())
    return r.status == Status::kGpuLost ? nvml::kErrorGpuIsLost : nvml::kErrorNotSupported;
  out = r.value;
  if (s == Signal::kEnergy && g->energy_wrap) {
    // Start 1 J below the top of the 64-bit counter, so that it wraps within a second of load.
    const int64_t first = at(index_of(d), s, g->t0_ns).value;
    out = static_cast<int64_t>(~uint64_t{0} - 1000 + static_cast<uint64_t>(r.value - first));
  }
  if (s == Signal::kEnergy && g->energy_reset_after_ms >= 0 &&
      elapsed_ms() > g->energy_reset_after_ms) {
    // Counting restarts from 0 at the reset: what was counted since then.
    const int64_t ns = g->t0_ns + static_cast<int64_t>(g->energy_reset_after_ms * 1e6 * g->speed);
    out = r.value - at(index_of(d), s, ns).value;
  }
  if (s == Signal::kEnergy && g->energy_jitter && g->energy_reads++ % 2 == 1) out -= 1;
  if (s == Signal::kEnergy && g->energy_leap_after_ms >= 0 &&
      elapsed_ms() > g->energy_leap_after_ms)
    out += int64_t{1} << 60;
  if (s == Signal::kPowerUsage && g->power_glitch && ++g->power_reads % 5 == 0) out = 0xFFFFFFFF;
  return nvml::kSuccess;
}

template <class T>
nvml::Return read_as(nvml::Device d, Signal s, T* out) {
  int64_t v = 0;
  nvml::Return r = read(d, s, v);
  if (r == nvml::kSuccess) *out = static_cast<T>(v);
  return r;
}

nvml::Return info(nvml::Device d, unsigned* out, unsigned value) {
  slow();
  if (!valid(d)) return 2;
  *out = value;
  return nvml::kSuccess;
}

}  // namespace

extern "C" {

// Initialisation is counted, as the real library's: the state lives until the last
// nvmlShutdown. Each nvmlInit reads the configuration afresh (a test's next faults).
int g_inits = 0;

nvml::Return nvmlInit_v2() {
  auto s = std::make_unique<State>();
  const char* faults = std::getenv("POWERSHAPE_FAKE_NVML_FAULTS");
  std::string f = faults != nullptr ? faults : "";
  auto has = [&](const std::string& k) {
    return ("," + f + ",").find("," + k + ",") != std::string::npos;
  };
  if (has("no_driver")) return nvml::kErrorDriverNotLoaded;
  const char* path = std::getenv("POWERSHAPE_FAKE_NVML_TRACE");
  if (path == nullptr) return nvml::kErrorDriverNotLoaded;
  try {
    s->trace = powershape::trace::read_csv(path);
  } catch (const std::exception&) {
    return nvml::kErrorUnknown;
  }
  if (const char* sp = std::getenv("POWERSHAPE_FAKE_NVML_SPEED")) s->speed = std::atof(sp);
  if (const char* ps = std::getenv("POWERSHAPE_FAKE_NVML_PROCESSES")) {
    std::string list = ps;
    for (std::size_t at = 0; at < list.size();) {
      std::size_t end = std::min(list.find(',', at), list.size());
      const std::string item = list.substr(at, end - at);
      const std::size_t colon = item.find(':');
      if (colon != std::string::npos)
        s->processes.emplace_back(static_cast<unsigned>(std::atol(item.c_str())),
                                  static_cast<unsigned>(std::atol(item.c_str() + colon + 1)));
      at = end + 1;
    }
  }
  std::size_t pos = 0;
  while (pos < f.size()) {
    auto comma = f.find(',', pos);
    std::string item = f.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? f.size() : comma + 1;
    auto eq = item.find('=');
    std::string key = item.substr(0, eq), val = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (key == "unsupported" || key == "error") {
      auto sig = powershape::telemetry::signal_by_name(val);
      if (!sig) return nvml::kErrorUnknown;
      (key == "unsupported" ? s->unsupported : s->failing).insert(*sig);
    }
    auto part = [&](std::size_t i) {  // the i-th of val's colon-separated parts, or ""
      std::size_t at = 0;
      for (std::size_t k = 0; k < i && at != std::string::npos; ++k) {
        at = val.find(':', at);
        if (at != std::string::npos) ++at;
      }
      if (at == std::string::npos) return std::string();
      return val.substr(at, val.find(':', at) - at);
    };
    if (key == "code") {
      static const std::map<std::string, int> kNames = {
          {"timeout", 10},
          {"no_permission", nvml::kErrorNoPermission},
          {"insufficient_size", nvml::kErrorInsufficientSize},
          {"unknown", nvml::kErrorUnknown},
          {"gpu_lost", nvml::kErrorGpuIsLost},
          {"not_supported", nvml::kErrorNotSupported}};
      auto named = kNames.find(part(1));
      Fault& f = s->faults[part(0)];
      f.code = named != kNames.end() ? named->second : std::atoi(part(1).c_str());
      if (!part(2).empty()) f.remaining = std::atol(part(2).c_str());
    }
    if (key == "slow") s->faults[part(0)].slow_us = std::atol(part(1).c_str());
    if (key == "cpu") s->faults[part(0)].cpu_us = std::atol(part(1).c_str());
    if (key == "h200_costs") {
      s->h200_costs = true;
      for (const char* fn :
           {"power_usage", "clock", "temperature", "reasons", "utilization", "fields", "samples"}) {
        s->faults[fn].cpu_us = 2;
      }
      s->faults["energy"].cpu_us = 2900;
    }
    if (key == "hang") {
      Fault& f = s->faults[part(0)];
      f.hang_after_ms = std::atof(part(1).c_str());
      if (!part(2).empty()) f.hang_gpu = std::atoi(part(2).c_str());
    }
    if (key == "back_after_ms") s->back_after_ms = std::atof(val.c_str());
    if (key == "energy_reset_after_ms") s->energy_reset_after_ms = std::atof(val.c_str());
    if (key == "energy_jitter") s->energy_jitter = true;
    if (key == "energy_leap_after_ms") s->energy_leap_after_ms = std::atof(val.c_str());
    if (key == "power_glitch") s->power_glitch = true;
    if (key == "odd_samples") s->odd_samples = true;
    if (key == "skipped_samples") s->skipped_samples = true;
    if (key == "lost_after_ms") s->lost_after_ms = std::atof(val.c_str());
    if (key == "slow_us") s->slow_us = std::atol(val.c_str());
    if (key == "energy_wrap") s->energy_wrap = true;
    if (key == "no_samples") s->no_samples = true;
  }
  if (const char* n = std::getenv("POWERSHAPE_FAKE_NVML_GPUS")) {
    const int copies = std::atoi(n);
    if (copies < 1 || copies > 64) return nvml::kErrorUnknown;
    std::vector<powershape::trace::Sample> first;
    for (const auto& row : s->trace.samples) {
      if (row.gpu == 0) first.push_back(row);
    }
    s->trace.samples.clear();
    for (int g = 0; g < copies; ++g) {
      for (auto row : first) {
        row.gpu = g;
        s->trace.samples.push_back(row);
      }
    }
  }
  int gpus = 0;
  for (const auto& row : s->trace.samples) gpus = std::max(gpus, row.gpu + 1);
  s->rows.resize(static_cast<std::size_t>(gpus));
  s->t0_ns = s->trace.samples.empty() ? 0 : s->trace.samples.front().t_ns;
  for (const auto& row : s->trace.samples) {
    s->rows[static_cast<std::size_t>(row.gpu)].push_back(&row);
    s->t0_ns = std::min(s->t0_ns, row.t_ns);
  }
  for (auto& rows : s->rows) {
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto* a, const auto* b) { return a->t_ns < b->t_ns; });
  }
  s->start = std::chrono::steady_clock::now();
  s->start_realtime_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  g = std::move(s);
  ++g_inits;
  return nvml::kSuccess;
}

nvml::Return nvmlShutdown() {
  if (--g_inits <= 0) {
    g_inits = 0;
    g.reset();
  }
  return nvml::kSuccess;
}

const char* nvmlErrorString(nvml::Return r) {
  switch (r) {
    case nvml::kErrorNotSupported:
      return "Not Supported";
    case nvml::kErrorGpuIsLost:
      return "GPU is lost";
    case nvml::kErrorDriverNotLoaded:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}

nvml::Return nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  if (nvml::Return r = inject("driver_version")) return r;
  std::snprintf(buf, len, "%s", "fake-580");
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetCount_v2(unsigned* n) {
  if (nvml::Return r = inject("count")) return r;
  *n = g ? static_cast<unsigned>(g->rows.size()) : 0;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml::Device* d) {
  if (nvml::Return r = inject("handle", static_cast<int>(i))) return r;
  if (!g || i >= g->rows.size()) return 2;
  *d = reinterpret_cast<nvml::Device>(static_cast<intptr_t>(i) + 1);
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetName(nvml::Device d, char* buf, unsigned len) {
  if (!valid(d)) return 2;
  if (nvml::Return r = inject("name", index_of(d))) return r;
  std::snprintf(buf, len, "Fake H200 %d", index_of(d));
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetUUID(nvml::Device d, char* buf, unsigned len) {
  if (!valid(d)) return 2;
  if (nvml::Return r = inject("uuid", index_of(d))) return r;
  std::snprintf(buf, len, "GPU-fake-%d", index_of(d));
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetPowerManagementLimit(nvml::Device d, unsigned* v) {
  if (nvml::Return r = inject("power_limit", index_of(d))) return r;
  const Settings s = settings_of(index_of(d));
  return s.limit_mw > 0 && valid(d) ? (*v = s.limit_mw, nvml::kSuccess) : info(d, v, 700000);
}
nvml::Return nvmlDeviceGetEnforcedPowerLimit(nvml::Device d, unsigned* v) {
  if (nvml::Return r = inject("enforced_limit", index_of(d))) return r;
  const Settings s = settings_of(index_of(d));
  return s.limit_mw > 0 && valid(d) ? (*v = s.limit_mw, nvml::kSuccess) : info(d, v, 700000);
}
// An H200's: memory 3201 MHz, graphics 1980 down to 345 MHz in 15 MHz steps.
nvml::Return nvmlDeviceGetSupportedMemoryClocks(nvml::Device d, unsigned* n, unsigned* mhz) {
  if (!valid(d)) return 2;
  if (nvml::Return r = inject("supported_clocks", index_of(d))) return r;
  if (*n < 1) return nvml::kErrorInsufficientSize;
  *n = 1;
  mhz[0] = 3201;
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceGetSupportedGraphicsClocks(nvml::Device d, unsigned mem, unsigned* n,
                                                  unsigned* mhz) {
  if (!valid(d) || mem != 3201) return 2;
  if (nvml::Return r = inject("supported_clocks", index_of(d))) return r;
  const unsigned count = (1980 - 345) / 15 + 1;
  if (*n < count) return nvml::kErrorInsufficientSize;
  *n = count;
  for (unsigned i = 0; i < count; ++i) mhz[i] = 1980 - 15 * i;
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceSetPowerManagementLimit(nvml::Device d, unsigned mw) {
  if (!valid(d)) return 2;
  if (nvml::Return r = inject("set_power_limit", index_of(d))) return r;
  if (mw < 200000 || mw > 700000) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  Settings s = settings_of(index_of(d));
  s.limit_mw = mw;
  store_settings(index_of(d), s);
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceSetGpuLockedClocks(nvml::Device d, unsigned lo, unsigned hi) {
  if (!valid(d)) return 2;
  if (nvml::Return r = inject("set_clocks", index_of(d))) return r;
  if (lo > hi || hi > 1980) return 2;
  Settings s = settings_of(index_of(d));
  s.min_mhz = lo;
  s.max_mhz = hi;
  store_settings(index_of(d), s);
  return nvml::kSuccess;
}
nvml::Return nvmlDeviceResetGpuLockedClocks(nvml::Device d) {
  if (!valid(d)) return 2;
  if (nvml::Return r = inject("reset_clocks", index_of(d))) return r;
  Settings s = settings_of(index_of(d));
  s.min_mhz = s.max_mhz = 0;
  store_settings(index_of(d), s);
  return nvml::kSuccess;
}
nvml::Return nvmlDevicePowerSmoothingSetState(nvml::Device d, nvml::PowerSmoothingState* st) {
  if (!valid(d)) return nvml::kErrorInvalidArgument;
  if (nvml::Return r = inject("smoothing_state", index_of(d))) return r;
  return fake_nvml::set_smoothing_state(index_of(d), st);
}
nvml::Return nvmlDevicePowerSmoothingActivatePresetProfile(nvml::Device d,
                                                           nvml::PowerSmoothingProfile* p) {
  if (!valid(d)) return nvml::kErrorInvalidArgument;
  if (nvml::Return r = inject("smoothing_profile", index_of(d))) return r;
  return fake_nvml::activate_smoothing_profile(index_of(d), p);
}
nvml::Return nvmlDevicePowerSmoothingUpdatePresetProfileParam(nvml::Device d,
                                                              nvml::PowerSmoothingProfile* p) {
  if (!valid(d)) return nvml::kErrorInvalidArgument;
  if (nvml::Return r = inject("smoothing_param", index_of(d))) return r;
  return fake_nvml::update_smoothing_param(index_of(d), p);
}
nvml::Return nvmlDeviceGetPowerManagementLimitConstraints(nvml::Device d, unsigned* lo,
                                                          unsigned* hi) {
  if (nvml::Return r = inject("constraints", index_of(d))) return r;
  nvml::Return r = info(d, lo, 200000);
  return r == nvml::kSuccess ? info(d, hi, 700000) : r;
}
nvml::Return nvmlDeviceGetMaxClockInfo(nvml::Device d, unsigned type, unsigned* v) {
  if (nvml::Return r = inject("max_clock", index_of(d))) return r;
  return info(d, v, type == nvml::kClockSm ? 1980 : 3201);
}
nvml::Return nvmlDeviceGetTemperatureThreshold(nvml::Device d, unsigned type, unsigned* v) {
  if (nvml::Return r = inject("threshold", index_of(d))) return r;
  if (type == nvml::kThresholdGpuMax || type == nvml::kThresholdMemMax)
    return nvml::kErrorNotSupported;
  return info(d, v, type == nvml::kThresholdShutdown ? 95 : 89);
}

nvml::Return nvmlDeviceGetPowerUsage(nvml::Device d, unsigned* v) {
  if (nvml::Return r = inject("power_usage", index_of(d))) return r;
  return read_as(d, Signal::kPowerUsage, v);
}
nvml::Return nvmlDeviceGetTotalEnergyConsumption(nvml::Device d, unsigned long long* v) {
  if (nvml::Return r = inject("energy", index_of(d))) return r;
  return read_as(d, Signal::kEnergy, v);
}
nvml::Return nvmlDeviceGetClockInfo(nvml::Device d, unsigned type, unsigned* v) {
  if (nvml::Return r = inject("clock", index_of(d))) return r;
  return read_as(d, type == nvml::kClockSm ? Signal::kSmClock : Signal::kMemClock, v);
}
nvml::Return nvmlDeviceGetTemperature(nvml::Device d, unsigned, unsigned* v) {
  if (nvml::Return r = inject("temperature", index_of(d))) return r;
  return read_as(d, Signal::kGpuTemp, v);
}
nvml::Return nvmlDeviceGetCurrentClocksEventReasons(nvml::Device d, unsigned long long* v) {
  if (nvml::Return r = inject("reasons", index_of(d))) return r;
  return read_as(d, Signal::kReasons, v);
}
nvml::Return nvmlDeviceGetUtilizationRates(nvml::Device d, nvml::Utilization* u) {
  if (nvml::Return r = inject("utilization", index_of(d))) return r;
  nvml::Return r = read_as(d, Signal::kUtilGpu, &u->gpu);
  return r == nvml::kSuccess ? read_as(d, Signal::kUtilMem, &u->memory) : r;
}

nvml::Return nvmlDeviceGetFieldValues(nvml::Device d, int n, nvml::FieldValue* values) {
  slow();
  if (!valid(d)) return 2;
  if (nvml::Return r = inject("fields", index_of(d))) return r;
  for (int i = 0; i < n; ++i) {
    nvml::FieldValue& v = values[i];
    Signal s;
    switch (v.fieldId) {
      case nvml::kFiPowerInstant:
        s = Signal::kPowerInstant;
        break;
      case nvml::kFiPowerAverage:
        s = v.scopeId == nvml::kPowerScopeMemory ? Signal::kMemoryPower : Signal::kPowerAverage;
        break;
      case nvml::kFiMemoryTemp:
        s = Signal::kMemTemp;
        break;
      case nvml::kFiThrottleSwPower:
        s = Signal::kThrottleSwPower;
        break;
      case nvml::kFiThrottleSwThermal:
        s = Signal::kThrottleSwThermal;
        break;
      case nvml::kFiThrottleHwThermal:
        s = Signal::kThrottleHwThermal;
        if (g->h200_costs) spin(580);
        break;
      case nvml::kFiThrottleHwPowerBrake:
        s = Signal::kThrottleHwPowerBrake;
        if (g->h200_costs) spin(580);
        break;
      default:
        if (fake_nvml::is_smoothing_field(v.fieldId)) {
          const unsigned limit = settings_of(index_of(d)).limit_mw;
          if (lost_now())
            v.nvmlReturn = nvml::kErrorGpuIsLost;
          else
            fake_nvml::read_smoothing_field(index_of(d), limit > 0 ? limit : 700000, v);
        } else {
          v.nvmlReturn = nvml::kErrorNotSupported;
        }
        continue;
    }
    int64_t out = 0;
    long saved = g->slow_us;
    g->slow_us = 0;  // one batched call is slow once, as in the driver
    v.nvmlReturn = read(d, s, out);
    g->slow_us = saved;
    v.valueType = nvml::kSignedLongLong;
    v.value.sllVal = out;
  }
  return nvml::kSuccess;
}

// The driver's power buffer: one sample every 20 ms of replay time, from the instantaneous power.
nvml::Return nvmlDeviceGetSamples(nvml::Device d, unsigned type, unsigned long long last_seen,
                                  nvml::ValueType* vt, unsigned* count, nvml::SampleValue* out) {
  slow();
  if (!valid(d) || count == nullptr) return 2;
  if (nvml::Return r = inject("samples", index_of(d))) return r;
  if (g->no_samples || type != nvml::kTotalPowerSamples) return nvml::kErrorNotSupported;
  if (lost_now()) return nvml::kErrorGpuIsLost;
  constexpr long long kStepUs = 20000;
  constexpr unsigned kCapacity = 120;
  long long now_us = g->start_realtime_us + static_cast<long long>(elapsed_ms() * 1000);
  // The buffer is full from the start (the GPU ran before it was asked): samples before the
  // replay's start hold its first power.
  long long first =
      std::max<long long>(now_us - kStepUs * kCapacity + 1, static_cast<long long>(last_seen) + 1);
  const long long after = first - g->start_realtime_us;  // onto the grid of 20 ms from the start
  first = g->start_realtime_us +
          (after >= 0 ? (after + kStepUs - 1) / kStepUs : after / kStepUs) * kStepUs;
  std::vector<nvml::SampleValue> fresh;
  for (long long t = first; t <= now_us; t += kStepUs) {
    if (g->skipped_samples && (t - g->start_realtime_us) / kStepUs % 7 / 2 == 2) continue;
    int64_t trace_ns =
        g->t0_ns +
        std::max<int64_t>(0, static_cast<int64_t>((t - g->start_realtime_us) * 1000 * g->speed));
    Reading r = at(index_of(d), Signal::kPowerInstant, trace_ns);
    if (!r.ok()) continue;
    nvml::SampleValue sv{};
    sv.timeStamp = static_cast<unsigned long long>(t);
    sv.sampleValue.uiVal = static_cast<unsigned>(r.value);
    fresh.push_back(sv);
    if (g->odd_samples) {  // a repeat, a sample from an hour ahead and one dated 0
      fresh.push_back(sv);
      nvml::SampleValue ahead = sv, zero = sv;
      ahead.timeStamp += 3'600'000'000ULL;
      zero.timeStamp = 0;
      fresh.push_back(ahead);
      fresh.push_back(zero);
    }
  }
  if (g->odd_samples) std::reverse(fresh.begin(), fresh.end());  // newest first
  *vt = nvml::kUnsignedInt;
  if (fresh.empty()) return nvml::kErrorNotFound;
  if (out == nullptr) {
    *count = static_cast<unsigned>(fresh.size());
    return nvml::kSuccess;
  }
  if (g->h200_costs) spin(700);
  if (*count < fresh.size()) fresh.resize(*count);
  std::memcpy(out, fresh.data(), fresh.size() * sizeof(nvml::SampleValue));
  *count = static_cast<unsigned>(fresh.size());
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetProcessUtilization(nvml::Device d, nvml::ProcessUtilizationSample* out,
                                             unsigned* count, unsigned long long last_seen) {
  slow();
  if (!valid(d) || count == nullptr) return 2;
  if (nvml::Return r = inject("processes", index_of(d))) return r;
  if (lost_now()) return nvml::kErrorGpuIsLost;
  constexpr long long kStepUs = 1'000'000 / 6;
  const long long now_us = g->start_realtime_us + static_cast<long long>(elapsed_ms() * 1000);
  std::vector<nvml::ProcessUtilizationSample> fresh;
  for (long long t = g->start_realtime_us + kStepUs; t <= now_us; t += kStepUs) {
    if (t <= static_cast<long long>(last_seen)) continue;
    for (const auto& [pid, sm] : g->processes)
      fresh.push_back({pid, static_cast<unsigned long long>(t), sm, sm / 2, 0, 0});
  }
  if (fresh.empty()) return nvml::kErrorNotFound;
  if (out == nullptr || *count < fresh.size()) {
    *count = static_cast<unsigned>(fresh.size());
    return nvml::kErrorInsufficientSize;
  }
  std::memcpy(out, fresh.data(), fresh.size() * sizeof(nvml::ProcessUtilizationSample));
  *count = static_cast<unsigned>(fresh.size());
  return nvml::kSuccess;
}

}  // extern "C"
