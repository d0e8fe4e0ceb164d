#pragma once
// The signals a telemetry source can report, each with its unit, and a reading that is either
// valid or says why not.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace powershape::telemetry {

enum class Signal : uint8_t {
  kPowerUsage,            // nvmlDeviceGetPowerUsage: 1 s average on Hopper, mW
  kPowerInstant,          // NVML_FI_DEV_POWER_INSTANT, mW
  kPowerAverage,          // NVML_FI_DEV_POWER_AVERAGE, mW
  kMemoryPower,           // NVML_FI_DEV_POWER_AVERAGE with the memory scope, mW
  kDriverPower,           // one sample of the driver's power buffer (nvmlDeviceGetSamples), mW
  kEnergy,                // total energy counter, unwrapped, mJ
  kSmClock,               // MHz
  kMemClock,              // MHz
  kGpuTemp,               // C
  kMemTemp,               // C
  kReasons,               // clock-event reason bitmask
  kThrottleSwPower,       // cumulative ns held below the clocks by the SW power cap
  kThrottleSwThermal,     // cumulative ns, SW thermal slowdown
  kThrottleHwThermal,     // cumulative ns, HW thermal slowdown
  kThrottleHwPowerBrake,  // cumulative ns, HW power brake
  kUtilGpu,               // %
  kUtilMem,               // %
  // Blackwell's power smoothing (NVML_FI_PWR_SMOOTHING_*); not supported on earlier GPUs.
  kSmoothingEnabled,  // 0 or 1
  kSmoothingProfile,  // the active preset profile
  kSmoothingFloor,    // the floor the firmware holds now, W
  kSmoothingCeiling,  // the ceiling it holds now, W
  kFanSpeed,          // nvmlDeviceGetFanSpeed: % of the fan's maximum (none on passive cards)
  kCount
};
inline constexpr std::size_t kSignalCount = static_cast<std::size_t>(Signal::kCount);

struct SignalSpec {
  Signal signal;
  std::string_view name;  // snake_case
  std::string_view unit;  // for people: "mW", "MHz", "%"
  // The largest value any GPU gives (10 kW, 10 GHz, 200 C, 100%): a recording beyond it is a unit
  // or a file gone wrong, refused rather than believed (a 9.2e15 W reading once drove advice).
  int64_t most = INT64_MAX;
};

// The signal's column in CSV and its key in JSON: the name, then the unit in lower case
// ("power_usage_mw", "sm_clock_mhz", "util_gpu_pct"); one scheme across every file.
std::string column_name(Signal s);

const std::array<SignalSpec, kSignalCount>& signal_specs();
const SignalSpec& spec(Signal s);
std::optional<Signal> signal_by_name(std::string_view name);

// Why a reading is not valid. kNotRead: the source did not read this signal for this row
// (a driver-buffer row carries only kDriverPower, for instance).
enum class Status : uint8_t { kOk, kNotRead, kNotSupported, kGpuLost, kError };

// The token written for a non-valid reading, in the manner of nvidia-smi.
std::string_view status_token(Status s);
std::optional<Status> status_from_token(std::string_view token);

struct Reading {
  int64_t value = 0;
  Status status = Status::kNotRead;
  bool ok() const { return status == Status::kOk; }
  static Reading of(int64_t v) { return {v, Status::kOk}; }
  static Reading failed(Status s) { return {0, s}; }
  bool operator==(const Reading&) const = default;
};

// Clock-event reason bits, as NVML defines them.
namespace reason {
inline constexpr uint64_t kGpuIdle = 0x1;
inline constexpr uint64_t kAppClocks = 0x2;
inline constexpr uint64_t kSwPowerCap = 0x4;
inline constexpr uint64_t kHwSlowdown = 0x8;
inline constexpr uint64_t kSyncBoost = 0x10;
inline constexpr uint64_t kSwThermal = 0x20;
inline constexpr uint64_t kHwThermal = 0x40;
inline constexpr uint64_t kHwPowerBrake = 0x80;
inline constexpr uint64_t kDisplayClocks = 0x100;
struct Named {
  uint64_t bit;
  std::string_view name;
};
inline constexpr std::array<Named, 9> kAll = {{{kGpuIdle, "idle"},
                                               {kAppClocks, "app_clocks"},
                                               {kSwPowerCap, "sw_power_cap"},
                                               {kHwSlowdown, "hw_slowdown"},
                                               {kSyncBoost, "sync_boost"},
                                               {kSwThermal, "sw_thermal"},
                                               {kHwThermal, "hw_thermal"},
                                               {kHwPowerBrake, "hw_power_brake"},
                                               {kDisplayClocks, "display_clocks"}}};
}  // namespace reason

}  // namespace powershape::telemetry
