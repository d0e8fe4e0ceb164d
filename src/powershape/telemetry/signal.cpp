#include "powershape/telemetry/signal.hpp"

namespace powershape::telemetry {

namespace {
constexpr int64_t kMostMw = 10'000'000;  // 10 kW: beyond any one GPU (a B200 is 1.2 kW)
constexpr int64_t kMostW = kMostMw / 1000;
constexpr int64_t kMostMj = 100'000'000'000'000'000;  // 10 kW for 300 years, in mJ
constexpr int64_t kMostMhz = 10'000;
constexpr int64_t kMostC = 200;
}  // namespace

const std::array<SignalSpec, kSignalCount>& signal_specs() {
  static const std::array<SignalSpec, kSignalCount> kSpecs = {{
      {Signal::kPowerUsage, "power_usage", "mW", kMostMw},
      {Signal::kPowerInstant, "power_instant", "mW", kMostMw},
      {Signal::kPowerAverage, "power_average", "mW", kMostMw},
      {Signal::kMemoryPower, "memory_power", "mW", kMostMw},
      {Signal::kDriverPower, "driver_power", "mW", kMostMw},
      {Signal::kEnergy, "energy", "mJ", kMostMj},
      {Signal::kSmClock, "sm_clock", "MHz", kMostMhz},
      {Signal::kMemClock, "mem_clock", "MHz", kMostMhz},
      {Signal::kGpuTemp, "gpu_temp", "C", kMostC},
      {Signal::kMemTemp, "mem_temp", "C", kMostC},
      {Signal::kReasons, "clock_event_reasons", "bitmask"},
      {Signal::kThrottleSwPower, "throttle_sw_power", "ns"},
      {Signal::kThrottleSwThermal, "throttle_sw_thermal", "ns"},
      {Signal::kThrottleHwThermal, "throttle_hw_thermal", "ns"},
      {Signal::kThrottleHwPowerBrake, "throttle_hw_power_brake", "ns"},
      {Signal::kUtilGpu, "util_gpu", "%", 100},
      {Signal::kUtilMem, "util_mem", "%", 100},
      {Signal::kSmoothingEnabled, "smoothing_enabled", "", 1},
      {Signal::kSmoothingProfile, "smoothing_profile", "", 255},
      {Signal::kSmoothingFloor, "smoothing_floor", "W", kMostW},
      {Signal::kSmoothingCeiling, "smoothing_ceiling", "W", kMostW},
      {Signal::kFanSpeed, "fan_speed", "%", 100},
  }};
  return kSpecs;
}

const SignalSpec& spec(Signal s) { return signal_specs()[static_cast<std::size_t>(s)]; }

std::string column_name(Signal s) {
  const SignalSpec& sp = spec(s);
  std::string unit;
  if (sp.unit == "%") {
    unit = "pct";
  } else if (sp.unit != "bitmask") {
    for (char c : sp.unit) unit += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  return std::string(sp.name) + (unit.empty() ? "" : "_" + unit);
}

std::optional<Signal> signal_by_name(std::string_view name) {
  for (const auto& s : signal_specs()) {
    if (s.name == name) return s.signal;
  }
  return std::nullopt;
}

std::string_view status_token(Status s) {
  switch (s) {
    case Status::kOk:
      return "";
    case Status::kNotRead:
      return "";
    case Status::kNotSupported:
      return "[Not Supported]";
    case Status::kGpuLost:
      return "[GPU is lost]";
    case Status::kError:
      return "[Error]";
  }
  return "[Error]";
}

std::optional<Status> status_from_token(std::string_view token) {
  if (token.empty()) return Status::kNotRead;
  for (Status s : {Status::kNotSupported, Status::kGpuLost, Status::kError}) {
    if (token == status_token(s)) return s;
  }
  return std::nullopt;
}

}  // namespace powershape::telemetry
