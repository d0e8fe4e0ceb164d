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
inline constexpr unsigned kFiThrottleSwThermal = 269;
inline constexpr unsigned kFiThrottleHwThermal = 270;
inline constexpr unsigned kFiThrottleHwPowerBrake = 271;
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

struct SampleValue {
  unsigned long long timeStamp;  // CPU time, microseconds since the epoch
  Value sampleValue;
};

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
  Return (*DeviceGetCurrentClocksEventReasons)(Device, unsigned long long*) = nullptr;
  Return (*DeviceGetUtilizationRates)(Device, Utilization*) = nullptr;
  Return (*DeviceGetFieldValues)(Device, int, FieldValue*) = nullptr;
  Return (*DeviceGetSamples)(Device, unsigned, unsigned long long, ValueType*, unsigned*,
                             SampleValue*) = nullptr;

  Return (*DeviceGetSupportedMemoryClocks)(Device, unsigned*, unsigned*) = nullptr;
  Return (*DeviceGetSupportedGraphicsClocks)(Device, unsigned, unsigned*, unsigned*) = nullptr;
  // Setters (need root or CAP_SYS_ADMIN): only `advise --apply` calls them.
  Return (*DeviceSetPowerManagementLimit)(Device, unsigned) = nullptr;
  Return (*DeviceSetGpuLockedClocks)(Device, unsigned, unsigned) = nullptr;
  Return (*DeviceResetGpuLockedClocks)(Device) = nullptr;

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
