#pragma once
// Our own declarations of the few NVML entry points powershape calls, resolved at run time with
// dlopen("libnvidia-ml.so.1"). Layouts and constants follow nvml.h (CUDA 12/13, driver 5xx).
#include <cstdint>
#include <string>

namespace powershape::telemetry::nvml {

using Return = int;
using Device = struct DeviceOpaque*;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorUnknown = 999;

inline constexpr unsigned kClockSm = 1;
inline constexpr unsigned kClockMem = 2;
inline constexpr unsigned kTemperatureGpu = 0;
inline constexpr unsigned kThresholdShutdown = 0;
inline constexpr unsigned kThresholdSlowdown = 1;
inline constexpr unsigned kThresholdMemMax = 2;
inline constexpr unsigned kThresholdGpuMax = 3;
inline constexpr unsigned kTotalPowerSamples = 0;

inline constexpr unsigned kFiMemoryTemp = 82;
inline constexpr unsigned kFiPowerAverage = 185;
inline constexpr unsigned kFiPowerInstant = 186;
inline constexpr unsigned kFiEnergy = 191;
inline constexpr unsigned kFiThrottleSwPower = 74;
// NVML_FI_DEV_CLOCKS_EVENT_REASON_*: 251-253 (269-271 are power smoothing's).
inline constexpr unsigned kFiThrottleSwThermal = 251;
inline constexpr unsigned kFiThrottleHwThermal = 252;
inline constexpr unsigned kFiThrottleHwPowerBrake = 253;
// Power smoothing (Blackwell data-centre GPUs, driver 570 and later). The profile fields take the
// profile's id as their scope.
inline constexpr unsigned kFiSmoothingEnabled = 256;
inline constexpr unsigned kFiSmoothingPrivLevel = 257;
inline constexpr unsigned kFiSmoothingAppliedCeiling = 259;  // W (DCGM's header)
inline constexpr unsigned kFiSmoothingAppliedFloor = 260;    // W
inline constexpr unsigned kFiSmoothingMaxFloorPct = 261;
inline constexpr unsigned kFiSmoothingMinFloorPct = 262;
inline constexpr unsigned kFiSmoothingLifetimePct = 263;
inline constexpr unsigned kFiSmoothingProfiles = 264;
inline constexpr unsigned kFiSmoothingProfileFloorPct = 265;
inline constexpr unsigned kFiSmoothingProfileRampUp = 266;      // mW/s
inline constexpr unsigned kFiSmoothingProfileRampDown = 267;    // mW/s
inline constexpr unsigned kFiSmoothingProfileHysteresis = 268;  // ms
inline constexpr unsigned kFiSmoothingActiveProfile = 269;
inline constexpr unsigned kSmoothingMaxProfiles = 5;
// Parameters of nvmlDevicePowerSmoothingUpdatePresetProfileParam (in %, W/s, W/s, ms).
inline constexpr unsigned kSmoothingParamFloorPct = 0;
inline constexpr unsigned kSmoothingParamRampUp = 1;
inline constexpr unsigned kSmoothingParamRampDown = 2;
inline constexpr unsigned kSmoothingParamHysteresis = 3;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorArgumentVersionMismatch = 25;
inline constexpr unsigned kPowerScopeGpu = 0;
inline constexpr unsigned kPowerScopeMemory = 2;

enum ValueType : int {
  kDouble = 0,
  kUnsignedInt = 1,
  kUnsignedLong = 2,
  kUnsignedLongLong = 3,
  kSignedLongLong = 4,
  kSignedInt = 5,
  kUnsignedShort = 6,
};

union Value {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

struct FieldValue {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  ValueType valueType;
  Return nvmlReturn;
  Value value;
};

// NVML_STRUCT_VERSION: the struct's size, and its version in the top byte.
struct PowerSmoothingProfile {
  unsigned int version;
  unsigned int profileId;
  unsigned int paramId;
  double value;
};
static_assert(sizeof(PowerSmoothingProfile) == 24, "nvmlPowerSmoothingProfile_v1_t's layout");
inline constexpr unsigned kPowerSmoothingProfileV1 = sizeof(PowerSmoothingProfile) | (1u << 24);
struct PowerSmoothingState {
  unsigned int version;
  unsigned int state;  // nvmlEnableState_t: 0 disabled, 1 enabled
};
inline constexpr unsigned kPowerSmoothingStateV1 = sizeof(PowerSmoothingState) | (1u << 24);

struct SampleValue {
  unsigned long long timeStamp;  // CPU time, microseconds since the epoch
  Value sampleValue;
};

struct ProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
  unsigned int pid;
  unsigned long long timeStamp;  // CPU time, microseconds since the epoch
  unsigned int smUtil, memUtil, encUtil, decUtil;
};
static_assert(sizeof(ProcessUtilizationSample) == 32, "nvmlProcessUtilizationSample_t's layout");

struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

// Converts an NVML value of the given type to a signed 64-bit integer.
int64_t to_int64(ValueType type, const Value& v);

// The resolved entry points. Functions the loaded library lacks stay null.
struct Api {
  Return (*Init)() = nullptr;
  Return (*Shutdown)() = nullptr;
  const char* (*ErrorString)(Return) = nullptr;
  Return (*SystemGetDriverVersion)(char*, unsigned) = nullptr;
  Return (*DeviceGetCount)(unsigned*) = nullptr;
  Return (*DeviceGetHandleByIndex)(unsigned, Device*) = nullptr;
  Return (*DeviceGetName)(Device, char*, unsigned) = nullptr;
  Return (*DeviceGetUUID)(Device, char*, unsigned) = nullptr;
  Return (*DeviceGetPowerManagementLimit)(Device, unsigned*) = nullptr;
  Return (*DeviceGetEnforcedPowerLimit)(Device, unsigned*) = nullptr;
  Return (*DeviceGetPowerManagementLimitConstraints)(Device, unsigned*, unsigned*) = nullptr;
  Return (*DeviceGetMaxClockInfo)(Device, unsigned, unsigned*) = nullptr;
  Return (*DeviceGetTemperatureThreshold)(Device, unsigned, unsigned*) = nullptr;
  Return (*DeviceGetPowerUsage)(Device, unsigned*) = nullptr;
  Return (*DeviceGetTotalEnergyConsumption)(Device, unsigned long long*) = nullptr;
  Return (*DeviceGetClockInfo)(Device, unsigned, unsigned*) = nullptr;
  Return (*DeviceGetTemperature)(Device, unsigned, unsigned*) = nullptr;
  Return (*DeviceGetFanSpeed)(Device, unsigned*) = nullptr;
  Return (*DeviceGetCurrentClocksEventReasons)(Device, unsigned long long*) = nullptr;
  Return (*DeviceGetUtilizationRates)(Device, Utilization*) = nullptr;
  Return (*DeviceGetFieldValues)(Device, int, FieldValue*) = nullptr;
  Return (*DeviceGetSamples)(Device, unsigned, unsigned long long, ValueType*, unsigned*,
                             SampleValue*) = nullptr;
  Return (*DeviceGetProcessUtilization)(Device, ProcessUtilizationSample*, unsigned*,
                                        unsigned long long) = nullptr;

  Return (*DeviceGetSupportedMemoryClocks)(Device, unsigned*, unsigned*) = nullptr;
  Return (*DeviceGetSupportedGraphicsClocks)(Device, unsigned, unsigned*, unsigned*) = nullptr;
  // Setters (need root or CAP_SYS_ADMIN): only `advise --apply` and `power-smoothing` call them.
  Return (*DeviceSetPowerManagementLimit)(Device, unsigned) = nullptr;
  Return (*DeviceSetGpuLockedClocks)(Device, unsigned, unsigned) = nullptr;
  Return (*DeviceResetGpuLockedClocks)(Device) = nullptr;
  Return (*DevicePowerSmoothingSetState)(Device, PowerSmoothingState*) = nullptr;
  Return (*DevicePowerSmoothingActivatePresetProfile)(Device, PowerSmoothingProfile*) = nullptr;
  Return (*DevicePowerSmoothingUpdatePresetProfileParam)(Device, PowerSmoothingProfile*) = nullptr;

  std::string error_string(Return r) const;
};

// The library, loaded once and initialised; unloaded when the last user goes.
class Library {
 public:
  // Loads `path` (default libnvidia-ml.so.1) and calls nvmlInit. Throws std::runtime_error with a
  // one-line reason when the library or driver is missing.
  explicit Library(const std::string& path = "libnvidia-ml.so.1");
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  const Api& api() const { return api_; }

 private:
  void* handle_ = nullptr;
  Api api_;
};

}  // namespace powershape::telemetry::nvml
