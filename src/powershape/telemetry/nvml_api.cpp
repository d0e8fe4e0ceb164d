#include "powershape/telemetry/nvml_api.hpp"

#include <dlfcn.h>

#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::telemetry::nvml {

int64_t to_int64(ValueType type, const Value& v) {
  switch (type) {
    case kDouble:
      return static_cast<int64_t>(v.dVal);
    case kUnsignedInt:
      return v.uiVal;
    case kUnsignedLong:
      return static_cast<int64_t>(v.ulVal);
    case kUnsignedLongLong:
      return static_cast<int64_t>(v.ullVal);
    case kSignedLongLong:
      return v.sllVal;
    case kSignedInt:
      return v.siVal;
    case kUnsignedShort:
      return v.usVal;
  }
  return 0;
}

std::string Api::error_string(Return r) const {
  if (ErrorString != nullptr) {
    if (const char* s = ErrorString(r)) return s;
  }
  return "NVML error " + std::to_string(r);
}

namespace {
template <class F>
void resolve(void* handle, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
}
}  // namespace

Library::Library(const std::string& path) {
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    throw unsupported("no NVIDIA driver: cannot load " + path + " (" + dlerror() + ")");
  }
  resolve(handle_, api_.Init, "nvmlInit_v2");
  resolve(handle_, api_.Shutdown, "nvmlShutdown");
  resolve(handle_, api_.ErrorString, "nvmlErrorString");
  resolve(handle_, api_.SystemGetDriverVersion, "nvmlSystemGetDriverVersion");
  resolve(handle_, api_.DeviceGetCount, "nvmlDeviceGetCount_v2");
  resolve(handle_, api_.DeviceGetHandleByIndex, "nvmlDeviceGetHandleByIndex_v2");
  resolve(handle_, api_.DeviceGetName, "nvmlDeviceGetName");
  resolve(handle_, api_.DeviceGetUUID, "nvmlDeviceGetUUID");
  resolve(handle_, api_.DeviceGetPowerManagementLimit, "nvmlDeviceGetPowerManagementLimit");
  resolve(handle_, api_.DeviceGetEnforcedPowerLimit, "nvmlDeviceGetEnforcedPowerLimit");
  resolve(handle_, api_.DeviceGetPowerManagementLimitConstraints,
          "nvmlDeviceGetPowerManagementLimitConstraints");
  resolve(handle_, api_.DeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo");
  resolve(handle_, api_.DeviceGetTemperatureThreshold, "nvmlDeviceGetTemperatureThreshold");
  resolve(handle_, api_.DeviceGetPowerUsage, "nvmlDeviceGetPowerUsage");
  resolve(handle_, api_.DeviceGetTotalEnergyConsumption, "nvmlDeviceGetTotalEnergyConsumption");
  resolve(handle_, api_.DeviceGetClockInfo, "nvmlDeviceGetClockInfo");
  resolve(handle_, api_.DeviceGetTemperature, "nvmlDeviceGetTemperature");
  resolve(handle_, api_.DeviceGetFanSpeed, "nvmlDeviceGetFanSpeed");
  resolve(handle_, api_.DeviceGetCurrentClocksEventReasons,
          "nvmlDeviceGetCurrentClocksEventReasons");
  resolve(handle_, api_.DeviceGetUtilizationRates, "nvmlDeviceGetUtilizationRates");
  resolve(handle_, api_.DeviceGetFieldValues, "nvmlDeviceGetFieldValues");
  resolve(handle_, api_.DeviceGetSamples, "nvmlDeviceGetSamples");
  resolve(handle_, api_.DeviceGetProcessUtilization, "nvmlDeviceGetProcessUtilization");
  resolve(handle_, api_.DeviceGetSupportedMemoryClocks, "nvmlDeviceGetSupportedMemoryClocks");
  resolve(handle_, api_.DeviceGetSupportedGraphicsClocks, "nvmlDeviceGetSupportedGraphicsClocks");
  resolve(handle_, api_.DeviceSetPowerManagementLimit, "nvmlDeviceSetPowerManagementLimit");
  resolve(handle_, api_.DeviceSetGpuLockedClocks, "nvmlDeviceSetGpuLockedClocks");
  resolve(handle_, api_.DeviceResetGpuLockedClocks, "nvmlDeviceResetGpuLockedClocks");
  resolve(handle_, api_.DevicePowerSmoothingSetState, "nvmlDevicePowerSmoothingSetState");
  resolve(handle_, api_.DevicePowerSmoothingActivatePresetProfile,
          "nvmlDevicePowerSmoothingActivatePresetProfile");
  resolve(handle_, api_.DevicePowerSmoothingUpdatePresetProfileParam,
          "nvmlDevicePowerSmoothingUpdatePresetProfileParam");
  if (api_.Init == nullptr || api_.DeviceGetCount == nullptr ||
      api_.DeviceGetHandleByIndex == nullptr) {
    dlclose(handle_);
    throw unsupported(path + " lacks nvmlInit_v2/nvmlDeviceGetCount_v2: not an NVML library");
  }
  if (Return r = api_.Init(); r != kSuccess) {
    std::string why = api_.error_string(r);
    dlclose(handle_);
    throw unsupported("no NVIDIA driver: nvmlInit failed (" + why + ")");
  }
}

Library::~Library() {
  if (api_.Shutdown != nullptr) api_.Shutdown();
  dlclose(handle_);
}

}  // namespace powershape::telemetry::nvml
