#include "powershape/telemetry/nvml_source.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "powershape/telemetry/clock.hpp"
#include "powershape/telemetry/cuda_visible.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/printable.hpp"

namespace powershape::telemetry {
namespace {

struct FieldSignal {
  unsigned field;
  unsigned scope;
  Signal signal;
};
constexpr std::array<FieldSignal, 12> kFields = {{
    {nvml::kFiPowerInstant, nvml::kPowerScopeGpu, Signal::kPowerInstant},
    {nvml::kFiPowerAverage, nvml::kPowerScopeGpu, Signal::kPowerAverage},
    {nvml::kFiPowerAverage, nvml::kPowerScopeMemory, Signal::kMemoryPower},
    {nvml::kFiMemoryTemp, 0, Signal::kMemTemp},
    {nvml::kFiThrottleSwPower, 0, Signal::kThrottleSwPower},
    {nvml::kFiThrottleSwThermal, 0, Signal::kThrottleSwThermal},
    {nvml::kFiThrottleHwThermal, 0, Signal::kThrottleHwThermal},
    {nvml::kFiThrottleHwPowerBrake, 0, Signal::kThrottleHwPowerBrake},
    {nvml::kFiSmoothingEnabled, 0, Signal::kSmoothingEnabled},
    {nvml::kFiSmoothingActiveProfile, 0, Signal::kSmoothingProfile},
    {nvml::kFiSmoothingAppliedFloor, 0, Signal::kSmoothingFloor},
    {nvml::kFiSmoothingAppliedCeiling, 0, Signal::kSmoothingCeiling},
}};

template <class F, class... A>
nvml::Return call(F fn, A... args) {
  return fn == nullptr ? nvml::kErrorFunctionNotFound : fn(args...);
}

// A driver sample dated 0, or more than a second ahead of now (it would hide every later one), is
// not to be believed.
bool dated_sensibly(unsigned long long t_us, unsigned long long now_us) {
  return t_us != 0 && t_us <= now_us + 1'000'000;
}

Reading reading_of(nvml::Return r, int64_t v, Status failed) {
  return r == nvml::kSuccess ? Reading::of(v) : Reading::failed(failed);
}

}  // namespace

NvmlSource::NvmlSource(const std::vector<int>& gpus, const std::string& library)
    : lib_(std::make_unique<nvml::Library>(library)),
      realtime_minus_steady_ns_(wall_minus_steady_ns()) {
  const auto& api = lib_->api();
  unsigned count = 0;
  if (nvml::Return r = api.DeviceGetCount(&count); r != nvml::kSuccess) {
    throw device_error("NVML cannot count GPUs: " + api.error_string(r));
  }
  if (count == 0) throw unsupported("NVML sees no GPU");
  std::vector<int> chosen = gpus;
  if (chosen.empty()) {
    // The GPUs the job sees, where CUDA_VISIBLE_DEVICES says; else all.
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
      std::vector<std::string> uuids(count);
      for (unsigned i = 0; i < count; ++i) {
        nvml::Device d = nullptr;
        char buf[96] = {};
        if (call(api.DeviceGetHandleByIndex, i, &d) == nvml::kSuccess &&
            call(api.DeviceGetUUID, d, buf, sizeof buf) == nvml::kSuccess)
          uuids[i] = buf;
      }
      chosen = *cuda_visible(visible, uuids);
    } else {
      for (unsigned i = 0; i < count; ++i) chosen.push_back(static_cast<int>(i));
    }
  }
  for (int index : chosen) {
    if (index < 0 || static_cast<unsigned>(index) >= count) {
      throw invalid_input("no GPU " + std::to_string(index) + ": NVML sees " +
                          std::to_string(count) + " (0.." + std::to_string(count - 1) + ")");
    }
    Gpu g;
    if (nvml::Return r = api.DeviceGetHandleByIndex(static_cast<unsigned>(index), &g.handle);
        r != nvml::kSuccess) {
      throw device_error("NVML cannot open GPU " + std::to_string(index) + ": " +
                         api.error_string(r));
    }
    gpus_.push_back(g);
    infos_.push_back(read_info(index, gpus_.back()));
    probe(static_cast<int>(gpus_.size()) - 1);
  }
}

std::string NvmlSource::describe() const { return "nvml"; }

std::vector<Event> NvmlSource::take_events() {
  std::lock_guard lock(events_mu_);
  return std::exchange(events_, {});
}

void NvmlSource::event(int64_t t_ns, int gpu, std::string what) {
  std::lock_guard lock(events_mu_);
  events_.push_back({t_ns, gpu, std::move(what)});
}

// A reading no GPU gives (SignalSpec::most: a driver glitch, a broken fake) is an error reading,
// not a value to record, sum or plan from; said once per GPU.
void NvmlSource::physical(int gpu, Gpu& g, Sample& s) {
  for (const auto& sp : signal_specs()) {
    Reading& r = s[sp.signal];
    if (!r.ok() || r.value <= sp.most) continue;
    if (!g.said_beyond) {
      g.said_beyond = true;
      event(s.t_ns, gpu,
            column_name(sp.signal) + " " + std::to_string(r.value) +
                " is beyond any GPU (at most " + std::to_string(sp.most) +
                "); such readings are recorded as errors (said once)");
    }
    r = Reading::failed(Status::kError);
  }
}

// A lost GPU is asked once a second, with the cheapest call there is, whether it is back (a GPU
// reset, a driver that recovered).
bool NvmlSource::back_from_lost(int gpu, Gpu& g, int64_t now_ns) {
  if (now_ns < g.retry_ns) return false;
  g.retry_ns = now_ns + 1'000'000'000;
  unsigned mw = 0;
  if (call(lib_->api().DeviceGetPowerUsage, g.handle, &mw) != nvml::kSuccess) return false;
  g.lost = false;
  g.energy =
      CounterUnwrap(spec(Signal::kPowerUsage).most);  // the counter may have restarted with the GPU
  event(now_ns, gpu, "GPU is back; sampling resumes");
  return true;
}

Status NvmlSource::status_of(nvml::Return r, Gpu& g) const {
  switch (r) {
    case nvml::kSuccess:
      return Status::kOk;
    case nvml::kErrorNotSupported:
    case nvml::kErrorFunctionNotFound:
    case nvml::kErrorNoPermission:
      return Status::kNotSupported;
    case nvml::kErrorGpuIsLost:
      if (!g.lost) g.retry_ns = steady_now_ns() + 1'000'000'000;
      g.lost = true;
      return Status::kGpuLost;
    default:
      return Status::kError;
  }
}

DeviceInfo NvmlSource::read_info(int nvml_index, Gpu& g) {
  const auto& api = lib_->api();
  DeviceInfo info;
  info.index = nvml_index;
  char buf[128] = {};
  if (call(api.DeviceGetName, g.handle, buf, sizeof buf) == nvml::kSuccess) info.name = buf;
  if (call(api.DeviceGetUUID, g.handle, buf, sizeof buf) == nvml::kSuccess) info.uuid = buf;
  if (call(api.SystemGetDriverVersion, buf, sizeof buf) == nvml::kSuccess) info.driver = buf;
  auto one = [&](auto fn, auto... args) {
    unsigned v = 0;
    nvml::Return r = call(fn, g.handle, args..., &v);
    return reading_of(r, v, status_of(r, g));
  };
  info.power_limit_mw = one(api.DeviceGetPowerManagementLimit);
  info.enforced_power_limit_mw = one(api.DeviceGetEnforcedPowerLimit);
  unsigned lo = 0, hi = 0;
  nvml::Return r = call(api.DeviceGetPowerManagementLimitConstraints, g.handle, &lo, &hi);
  info.min_power_limit_mw = reading_of(r, lo, status_of(r, g));
  info.max_power_limit_mw = reading_of(r, hi, status_of(r, g));
  info.max_sm_clock_mhz = one(api.DeviceGetMaxClockInfo, nvml::kClockSm);
  info.max_mem_clock_mhz = one(api.DeviceGetMaxClockInfo, nvml::kClockMem);
  info.temp_slowdown_c = one(api.DeviceGetTemperatureThreshold, nvml::kThresholdSlowdown);
  info.temp_shutdown_c = one(api.DeviceGetTemperatureThreshold, nvml::kThresholdShutdown);
  info.temp_gpu_max_c = one(api.DeviceGetTemperatureThreshold, nvml::kThresholdGpuMax);
  info.temp_mem_max_c = one(api.DeviceGetTemperatureThreshold, nvml::kThresholdMemMax);

  // What each signal supports and costs is learnt by probe() once the GPU is in place.
  info.support.fill(Status::kOk);
  unsigned count = 0;
  nvml::ValueType type{};
  r = call(api.DeviceGetSamples, g.handle, nvml::kTotalPowerSamples, 0ULL, &type, &count,
           static_cast<nvml::SampleValue*>(nullptr));
  if (r == nvml::kErrorNotSupported || r == nvml::kErrorFunctionNotFound) {
    info.support[static_cast<std::size_t>(Signal::kDriverPower)] = Status::kNotSupported;
  } else if (r == nvml::kSuccess && count > 1) {
    g.buffer_ns = buffer_depth_ns(g, count);
  }
  // Harvest only driver samples taken from now on.
  g.last_driver_sample_us = realtime_now_us();
  return info;
}

// The time the driver's whole power buffer (`count` samples) spans, one spacing added: how far
// back a drain can reach (an H200 with driver 580 keeps 120 samples 20 ms apart). Samples dated
// 0 or in the future are left out, as drain() leaves them; 0 when fewer than two are left.
int64_t NvmlSource::buffer_depth_ns(Gpu& g, unsigned count) {
  std::vector<nvml::SampleValue> buf(count);
  nvml::ValueType type{};
  if (call(lib_->api().DeviceGetSamples, g.handle, nvml::kTotalPowerSamples, 0ULL, &type, &count,
           buf.data()) != nvml::kSuccess) {
    return 0;
  }
  const auto now_us = realtime_now_us();
  unsigned long long lo = ULLONG_MAX, hi = 0;
  int64_t n = 0;
  for (unsigned i = 0; i < std::min<unsigned>(count, static_cast<unsigned>(buf.size())); ++i) {
    const unsigned long long t = buf[i].timeStamp;
    if (!dated_sensibly(t, now_us)) continue;
    lo = std::min(lo, t);
    hi = std::max(hi, t);
    ++n;
  }
  if (n < 2 || hi == lo) return 0;
  g.sample_spacing_us = static_cast<int64_t>(hi - lo) / (n - 1);
  return static_cast<int64_t>(hi - lo) * 1000 / (n - 1) * n;
}

void NvmlSource::read_fields(Gpu& g, const DeviceInfo& info, const SignalSet& which, Sample& s) {
  std::array<nvml::FieldValue, kFields.size()> values{};
  std::array<std::size_t, kFields.size()> field_of{};  // the kFields entry of each value
  int n = 0;
  for (std::size_t i = 0; i < kFields.size(); ++i) {
    if (!which[static_cast<std::size_t>(kFields[i].signal)]) continue;
    Status st = info.support[static_cast<std::size_t>(kFields[i].signal)];
    if (st != Status::kOk) {
      s[kFields[i].signal] = Reading::failed(st);
      continue;
    }
    values[n].fieldId = kFields[i].field;
    values[n].scopeId = kFields[i].scope;
    field_of[n++] = i;
  }
  if (n == 0) return;
  nvml::Return r = call(lib_->api().DeviceGetFieldValues, g.handle, n, values.data());
  for (int k = 0; k < n; ++k) {
    Signal sig = kFields[field_of[k]].signal;
    nvml::Return fr = (r == nvml::kSuccess) ? values[k].nvmlReturn : r;
    // A field id a driver older than it does not know is refused as invalid: not supported.
    if (r == nvml::kSuccess && fr == nvml::kErrorInvalidArgument) fr = nvml::kErrorNotSupported;
    s[sig] = reading_of(fr, nvml::to_int64(values[k].valueType, values[k].value), status_of(fr, g));
  }
}

Sample NvmlSource::poll(int gpu, const SignalSet& which) {
  Gpu& g = gpus_.at(static_cast<std::size_t>(gpu));
  const DeviceInfo& info = infos_.at(static_cast<std::size_t>(gpu));
  const auto& api = lib_->api();
  Sample s;
  s.gpu = gpu;
  int64_t t0 = steady_now_ns();
  s.t_ns = t0;
  if (g.lost) back_from_lost(gpu, g, t0);
  auto supported = [&](Signal sig) {
    if (!which[static_cast<std::size_t>(sig)]) return false;  // stays kNotRead
    Status st = info.support[static_cast<std::size_t>(sig)];
    if (g.lost) st = Status::kGpuLost;
    if (st != Status::kOk) s[sig] = Reading::failed(st);
    return st == Status::kOk;
  };
  auto one = [&](Signal sig, auto fn, auto... args) {
    if (!supported(sig)) return;
    unsigned v = 0;
    nvml::Return r = call(fn, g.handle, args..., &v);
    s[sig] = reading_of(r, v, status_of(r, g));
  };
  one(Signal::kPowerUsage, api.DeviceGetPowerUsage);
  one(Signal::kSmClock, api.DeviceGetClockInfo, nvml::kClockSm);
  one(Signal::kMemClock, api.DeviceGetClockInfo, nvml::kClockMem);
  one(Signal::kGpuTemp, api.DeviceGetTemperature, nvml::kTemperatureGpu);
  one(Signal::kFanSpeed, api.DeviceGetFanSpeed);
  if (supported(Signal::kReasons)) {
    unsigned long long v = 0;
    nvml::Return r = call(api.DeviceGetCurrentClocksEventReasons, g.handle, &v);
    s[Signal::kReasons] = reading_of(r, static_cast<int64_t>(v), status_of(r, g));
  }
  if (supported(Signal::kEnergy)) {
    unsigned long long v = 0;
    nvml::Return r = call(api.DeviceGetTotalEnergyConsumption, g.handle, &v);
    if (r == nvml::kSuccess) {
      CounterUnwrap::Step step = g.energy.feed(v, t0);
      s[Signal::kEnergy] = Reading::of(step.value);
      if (step.went_back) event(s.t_ns, gpu, "energy counter went back; continued");
      if (step.jumped > 0)
        event(s.t_ns, gpu,
              "energy counter leapt " + std::to_string(step.jumped) +
                  " mJ, faster than any GPU draws; not counted");
    } else {
      s[Signal::kEnergy] = Reading::failed(status_of(r, g));
    }
  }
  if (supported(Signal::kUtilGpu) | supported(Signal::kUtilMem)) {
    nvml::Utilization u{};
    nvml::Return r = call(api.DeviceGetUtilizationRates, g.handle, &u);
    Status st = status_of(r, g);
    for (auto [sig, v] :
         {std::pair{Signal::kUtilGpu, u.gpu}, std::pair{Signal::kUtilMem, u.memory}}) {
      auto i = static_cast<std::size_t>(sig);
      if (info.support[i] == Status::kOk && which[i]) s[sig] = reading_of(r, v, st);
    }
  }
  if (!g.lost) {
    read_fields(g, info, which, s);
  } else {
    for (const auto& f : kFields) supported(f.signal);  // marks them lost
  }
  s[Signal::kDriverPower] = Reading{};  // the driver buffer comes through drain()
  s.t_ns = t0 + (steady_now_ns() - t0) / 2;
  physical(gpu, g, s);
  return s;
}

// Reads each signal alone, three times: a signal the driver refuses is unsupported from then on,
// and the fastest read is its cost. On an H200 with driver 580 the energy counter costs ~3 ms a
// read, while everything else costs under 1 us; the SW/HW thermal and power-brake counters are
// refused on an H100 with driver 580 (0.13 ms each: bench/nvml_call_cost).
void NvmlSource::probe(int gpu) {
  Gpu& g = gpus_[static_cast<std::size_t>(gpu)];
  DeviceInfo& info = infos_[static_cast<std::size_t>(gpu)];
  for (std::size_t i = 0; i < kSignalCount; ++i) {
    if (i == static_cast<std::size_t>(Signal::kDriverPower)) continue;  // comes through drain()
    SignalSet one;
    one.set(i);
    int64_t best = INT64_MAX;
    for (int rep = 0; rep < 3 && info.support[i] == Status::kOk; ++rep) {
      int64_t t0 = steady_now_ns();
      Sample s = poll(gpu, one);
      best = std::min(best, steady_now_ns() - t0);
      if (s.readings[i].status == Status::kNotSupported) info.support[i] = Status::kNotSupported;
    }
    g.cost_ns[i] = info.support[i] == Status::kOk ? best : 0;
  }
  // A GPU without power smoothing may still answer its active profile field (an H100 with driver
  // 580 reads 0): without the state, none of its signals means anything.
  if (info.support[static_cast<std::size_t>(Signal::kSmoothingEnabled)] != Status::kOk) {
    for (const Signal sig :
         {Signal::kSmoothingProfile, Signal::kSmoothingFloor, Signal::kSmoothingCeiling}) {
      info.support[static_cast<std::size_t>(sig)] = Status::kNotSupported;
      g.cost_ns[static_cast<std::size_t>(sig)] = 0;
    }
  }
  g.energy = CounterUnwrap(spec(Signal::kPowerUsage).most);
}

std::array<int64_t, kSignalCount> NvmlSource::read_cost_ns(int gpu) const {
  return gpus_.at(static_cast<std::size_t>(gpu)).cost_ns;
}

unsigned long long NvmlSource::realtime_now_us() const {
  return static_cast<unsigned long long>((steady_now_ns() + realtime_minus_steady_ns_) / 1000);
}

int64_t NvmlSource::buffer_ns(int gpu) const {
  return gpus_.at(static_cast<std::size_t>(gpu)).buffer_ns;
}

std::vector<Sample> NvmlSource::drain(int gpu) {
  Gpu& g = gpus_.at(static_cast<std::size_t>(gpu));
  const DeviceInfo& info = infos_.at(static_cast<std::size_t>(gpu));
  std::vector<Sample> out;
  if (g.lost || info.support[static_cast<std::size_t>(Signal::kDriverPower)] != Status::kOk) {
    return out;
  }
  const auto& api = lib_->api();
  nvml::ValueType type{};
  unsigned count = 0;
  if (call(api.DeviceGetSamples, g.handle, nvml::kTotalPowerSamples, g.last_driver_sample_us, &type,
           &count, static_cast<nvml::SampleValue*>(nullptr)) != nvml::kSuccess ||
      count == 0) {
    return out;
  }
  std::vector<nvml::SampleValue> buf(count);
  nvml::Return r = call(api.DeviceGetSamples, g.handle, nvml::kTotalPowerSamples,
                        g.last_driver_sample_us, &type, &count, buf.data());
  if (r != nvml::kSuccess) {
    if (r == nvml::kErrorGpuIsLost) g.lost = true;
    return out;
  }
  buf.resize(count);
  std::stable_sort(buf.begin(), buf.end(),
                   [](const auto& a, const auto& b) { return a.timeStamp < b.timeStamp; });
  const auto now_us = realtime_now_us();
  int odd = 0;
  for (const auto& v : buf) {
    if (!dated_sensibly(v.timeStamp, now_us)) {
      ++odd;
      continue;
    }
    if (v.timeStamp <= g.last_driver_sample_us) continue;  // seen already, or a repeat
    // A wrap: the first new sample is more than two steps past the last seen, in a batch that
    // holds at least half the buffer (a drain every few tens of ms sees the driver's own skipped
    // steps at its batches' edges, and nothing lost).
    if (out.empty() && g.drained && g.sample_spacing_us > 0 &&
        v.timeStamp >
            g.last_driver_sample_us + 2 * static_cast<unsigned long long>(g.sample_spacing_us) &&
        (g.buffer_ns == 0 ||
         static_cast<int64_t>(buf.size()) * g.sample_spacing_us * 1000 >= g.buffer_ns / 2)) {
      event(steady_now_ns(), gpu,
            std::to_string((v.timeStamp - g.last_driver_sample_us) / 1000) +
                " ms of the driver's power samples are missing (its buffer wrapped before it "
                "was drained, or the GPU was away)");
    }
    g.drained = true;
    Sample s;
    s.gpu = gpu;
    s.t_ns = static_cast<int64_t>(v.timeStamp) * 1000 - realtime_minus_steady_ns_;
    s[Signal::kDriverPower] = Reading::of(nvml::to_int64(type, v.sampleValue));
    physical(gpu, g, s);
    out.push_back(s);
    g.last_driver_sample_us = v.timeStamp;
  }
  if (odd > 0 && !said_odd_samples_) {
    said_odd_samples_ = true;
    event(steady_now_ns(), gpu,
          "the driver's power buffer dated " + std::to_string(odd) +
              " samples at 0 or in the future; they are dropped (said once)");
  }
  return out;
}

}  // namespace powershape::telemetry

namespace powershape::telemetry {
namespace {

// A process's name as the kernel has it; "" where it cannot be read (gone, another namespace's).
// Whether this process sees the host's process ids: NVML gives host pids, and in a container (a
// PID namespace of its own: /proc/self/status lists more than one NSpid) /proc/PID is another
// process, or none.
bool host_pids() {
  static const bool host = [] {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("NSpid:", 0) != 0) continue;
      std::istringstream ids(line.substr(6));
      int n = 0;
      for (std::string id; ids >> id;) ++n;
      return n <= 1;
    }
    return true;  // a kernel before 4.1: no namespaces to tell
  }();
  return host;
}

// A process's name as the kernel has it; "" where it cannot be read (gone) or would be another's.
std::string comm_of(unsigned pid) {
  if (!host_pids()) return "";
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return util::printable(name);
}

}  // namespace

std::vector<ProcessSample> NvmlSource::process_samples(int gpu) {
  Gpu& g = gpus_.at(static_cast<std::size_t>(gpu));
  std::vector<ProcessSample> out;
  const auto& api = lib_->api();
  if (g.lost || g.processes_unsupported) return out;
  unsigned count = 0;
  nvml::Return r =
      call(api.DeviceGetProcessUtilization, g.handle,
           static_cast<nvml::ProcessUtilizationSample*>(nullptr), &count, g.last_process_sample_us);
  if (r == nvml::kErrorGpuIsLost) g.lost = true;
  if (r == nvml::kErrorNotSupported || r == nvml::kErrorFunctionNotFound ||
      r == nvml::kErrorNoPermission) {
    g.processes_unsupported = true;  // asked once: MIG, vGPU, an old driver
    event(steady_now_ns(), gpu,
          "per-process utilization: " + lib_->api().error_string(r) +
              " (no energy by process on this GPU)");
    return out;
  }
  if ((r != nvml::kSuccess && r != nvml::kErrorInsufficientSize) || count == 0) return out;
  // A process that started between the two calls makes the second find the buffer short: room
  // for a few more.
  std::vector<nvml::ProcessUtilizationSample> buf(count + 8);
  count = static_cast<unsigned>(buf.size());
  r = call(api.DeviceGetProcessUtilization, g.handle, buf.data(), &count, g.last_process_sample_us);
  if (r != nvml::kSuccess) {
    if (r == nvml::kErrorGpuIsLost) g.lost = true;
    return out;
  }
  buf.resize(std::min<std::size_t>(count, buf.size()));
  std::stable_sort(buf.begin(), buf.end(),
                   [](const auto& a, const auto& b) { return a.timeStamp < b.timeStamp; });
  const auto now_us = realtime_now_us();
  unsigned long long newest = g.last_process_sample_us;
  for (const auto& v : buf) {
    if (!dated_sensibly(v.timeStamp, now_us) || v.timeStamp <= g.last_process_sample_us) continue;
    ProcessSample p;
    p.gpu = gpu;
    p.t_ns = static_cast<int64_t>(v.timeStamp) * 1000 - realtime_minus_steady_ns_;
    p.pid = v.pid;
    // Percentages of the sampling period; anything past 100 is a driver's glitch.
    p.sm_pct = static_cast<int>(std::min(v.smUtil, 100u));
    p.mem_pct = static_cast<int>(std::min(v.memUtil, 100u));
    // A pid's name read once (a sample every ~1/6 s would read /proc as often); a pid reused by
    // another program keeps the first one's name.
    auto it = g.process_names.find(v.pid);
    if (it == g.process_names.end()) {
      if (g.process_names.size() >= 4096) g.process_names.clear();  // bounded over days
      it = g.process_names.emplace(v.pid, comm_of(v.pid)).first;
    }
    p.name = it->second;
    out.push_back(std::move(p));
    newest = std::max(newest, static_cast<unsigned long long>(v.timeStamp));
  }
  g.last_process_sample_us = newest;
  return out;
}

}  // namespace powershape::telemetry
