#include "powershape/telemetry/signal.hpp"

namespace powershape::telemetry {

const std::array<SignalSpec, kSignalCount>& signal_specs() {
  static const std::array<SignalSpec, kSignalCount> kSpecs = {{
      {Signal::kPowerUsage, "power_usage", "mW"},
      {Signal::kPowerInstant, "power_instant", "mW"},
      {Signal::kPowerAverage, "power_average", "mW"},
      {Signal::kMemoryPower, "memory_power", "mW"},
      {Signal::kDriverPower, "driver_power", "mW"},
      {Signal::kEnergy, "energy", "mJ"},
      {Signal::kSmClock, "sm_clock", "MHz"},
      {Signal::kMemClock, "mem_clock", "MHz"},
      {Signal::kGpuTemp, "gpu_temp", "C"},
      {Signal::kMemTemp, "mem_temp", "C"},
      {Signal::kReasons, "clock_event_reasons", "bitmask"},
      {Signal::kThrottleSwPower, "throttle_sw_power", "ns"},
      {Signal::kThrottleSwThermal, "throttle_sw_thermal", "ns"},
      {Signal::kThrottleHwThermal, "throttle_hw_thermal", "ns"},
      {Signal::kThrottleHwPowerBrake, "throttle_hw_power_brake", "ns"},
      {Signal::kUtilGpu, "util_gpu", "%"},
      {Signal::kUtilMem, "util_mem", "%"},
      {Signal::kSmoothingEnabled, "smoothing_enabled", ""},
      {Signal::kSmoothingProfile, "smoothing_profile", ""},
      {Signal::kSmoothingFloor, "smoothing_floor", "W"},
      {Signal::kSmoothingCeiling, "smoothing_ceiling", "W"},
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
