// A fake libnvidia-ml.so.1 that replays a recorded trace and injects faults, so that the real
// dlopen path of NvmlSource is what the tests exercise. Configured at nvmlInit from:
//   POWERSHAPE_FAKE_NVML_TRACE   trace CSV to replay (required)
//   POWERSHAPE_FAKE_NVML_SPEED   replay speed (default 1)
//   POWERSHAPE_FAKE_NVML_FAULTS  comma list of: no_driver, unsupported=SIGNAL, error=SIGNAL,
//                                lost_after_ms=N, energy_wrap, slow_us=N, no_samples
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "powershape/telemetry/nvml_api.hpp"
#include "powershape/trace/csv_reader.hpp"

using powershape::telemetry::Reading;
using powershape::telemetry::Signal;
using powershape::telemetry::Status;
namespace nvml = powershape::telemetry::nvml;

namespace {

struct State {
  powershape::trace::Trace trace;
  std::vector<std::vector<const powershape::trace::Sample*>> rows;  // per GPU, by time
  double speed = 1;
  std::set<Signal> unsupported, failing;
  double lost_after_ms = -1;
  bool energy_wrap = false, no_samples = false;
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

int index_of(nvml::Device d) { return static_cast<int>(reinterpret_cast<intptr_t>(d)) - 1; }

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

int64_t now_trace_ns() { return g->t0_ns + static_cast<int64_t>(elapsed_ms() * 1e6 * g->speed); }

nvml::Return read(nvml::Device d, Signal s, int64_t& out) {
  slow();
  if (!valid(d)) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  if (g->lost_after_ms >= 0 && elapsed_ms() > g->lost_after_ms) return nvml::kErrorGpuIsLost;
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
    if (key == "lost_after_ms") s->lost_after_ms = std::atof(val.c_str());
    if (key == "slow_us") s->slow_us = std::atol(val.c_str());
    if (key == "energy_wrap") s->energy_wrap = true;
    if (key == "no_samples") s->no_samples = true;
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
  return nvml::kSuccess;
}

nvml::Return nvmlShutdown() {
  g.reset();
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
  std::snprintf(buf, len, "%s", "fake-580");
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetCount_v2(unsigned* n) {
  *n = g ? static_cast<unsigned>(g->rows.size()) : 0;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml::Device* d) {
  if (!g || i >= g->rows.size()) return 2;
  *d = reinterpret_cast<nvml::Device>(static_cast<intptr_t>(i) + 1);
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetName(nvml::Device d, char* buf, unsigned len) {
  if (!valid(d)) return 2;
  std::snprintf(buf, len, "Fake H200 %d", index_of(d));
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetUUID(nvml::Device d, char* buf, unsigned len) {
  if (!valid(d)) return 2;
  std::snprintf(buf, len, "GPU-fake-%d", index_of(d));
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetPowerManagementLimit(nvml::Device d, unsigned* v) {
  return info(d, v, 700000);
}
nvml::Return nvmlDeviceGetEnforcedPowerLimit(nvml::Device d, unsigned* v) {
  return info(d, v, 700000);
}
nvml::Return nvmlDeviceGetPowerManagementLimitConstraints(nvml::Device d, unsigned* lo,
                                                          unsigned* hi) {
  nvml::Return r = info(d, lo, 200000);
  return r == nvml::kSuccess ? info(d, hi, 700000) : r;
}
nvml::Return nvmlDeviceGetMaxClockInfo(nvml::Device d, unsigned type, unsigned* v) {
  return info(d, v, type == nvml::kClockSm ? 1980 : 3201);
}
nvml::Return nvmlDeviceGetTemperatureThreshold(nvml::Device d, unsigned type, unsigned* v) {
  if (type == nvml::kThresholdGpuMax || type == nvml::kThresholdMemMax)
    return nvml::kErrorNotSupported;
  return info(d, v, type == nvml::kThresholdShutdown ? 95 : 89);
}

nvml::Return nvmlDeviceGetPowerUsage(nvml::Device d, unsigned* v) {
  return read_as(d, Signal::kPowerUsage, v);
}
nvml::Return nvmlDeviceGetTotalEnergyConsumption(nvml::Device d, unsigned long long* v) {
  return read_as(d, Signal::kEnergy, v);
}
nvml::Return nvmlDeviceGetClockInfo(nvml::Device d, unsigned type, unsigned* v) {
  return read_as(d, type == nvml::kClockSm ? Signal::kSmClock : Signal::kMemClock, v);
}
nvml::Return nvmlDeviceGetTemperature(nvml::Device d, unsigned, unsigned* v) {
  return read_as(d, Signal::kGpuTemp, v);
}
nvml::Return nvmlDeviceGetCurrentClocksEventReasons(nvml::Device d, unsigned long long* v) {
  return read_as(d, Signal::kReasons, v);
}
nvml::Return nvmlDeviceGetUtilizationRates(nvml::Device d, nvml::Utilization* u) {
  nvml::Return r = read_as(d, Signal::kUtilGpu, &u->gpu);
  return r == nvml::kSuccess ? read_as(d, Signal::kUtilMem, &u->memory) : r;
}

nvml::Return nvmlDeviceGetFieldValues(nvml::Device d, int n, nvml::FieldValue* values) {
  slow();
  if (!valid(d)) return 2;
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
        break;
      case nvml::kFiThrottleHwPowerBrake:
        s = Signal::kThrottleHwPowerBrake;
        break;
      default:
        v.nvmlReturn = nvml::kErrorNotSupported;
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
  if (g->no_samples || type != nvml::kTotalPowerSamples) return nvml::kErrorNotSupported;
  if (g->lost_after_ms >= 0 && elapsed_ms() > g->lost_after_ms) return nvml::kErrorGpuIsLost;
  constexpr long long kStepUs = 20000;
  constexpr unsigned kCapacity = 120;
  long long now_us = g->start_realtime_us + static_cast<long long>(elapsed_ms() * 1000);
  long long first = std::max<long long>(g->start_realtime_us, now_us - kStepUs * kCapacity);
  first = std::max<long long>(first, static_cast<long long>(last_seen) + 1);
  first = g->start_realtime_us + (first - g->start_realtime_us + kStepUs - 1) / kStepUs * kStepUs;
  std::vector<nvml::SampleValue> fresh;
  for (long long t = first; t <= now_us; t += kStepUs) {
    int64_t trace_ns =
        g->t0_ns + static_cast<int64_t>((t - g->start_realtime_us) * 1000 * g->speed);
    Reading r = at(index_of(d), Signal::kPowerInstant, trace_ns);
    if (!r.ok()) continue;
    nvml::SampleValue sv{};
    sv.timeStamp = static_cast<unsigned long long>(t);
    sv.sampleValue.uiVal = static_cast<unsigned>(r.value);
    fresh.push_back(sv);
  }
  *vt = nvml::kUnsignedInt;
  if (fresh.empty()) return nvml::kErrorNotFound;
  if (out == nullptr) {
    *count = static_cast<unsigned>(fresh.size());
    return nvml::kSuccess;
  }
  if (*count < fresh.size()) fresh.resize(*count);
  std::memcpy(out, fresh.data(), fresh.size() * sizeof(nvml::SampleValue));
  *count = static_cast<unsigned>(fresh.size());
  return nvml::kSuccess;
}

}  // extern "C"
