#pragma once
#include <array>
#include <string>

#include "powershape/telemetry/signal.hpp"

namespace powershape::telemetry {

// What a GPU is and what it is allowed to do. Limits that a source cannot read say why.
struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string uuid;
  std::string driver;
  Reading power_limit_mw;
  Reading enforced_power_limit_mw;
  Reading min_power_limit_mw;
  Reading max_power_limit_mw;
  Reading max_sm_clock_mhz;
  Reading max_mem_clock_mhz;
  Reading temp_slowdown_c;
  Reading temp_shutdown_c;
  Reading temp_gpu_max_c;
  Reading temp_mem_max_c;
  // Per signal: kOk where the source can read it, or why not.
  std::array<Status, kSignalCount> support{};
  bool operator==(const DeviceInfo&) const = default;
};

}  // namespace powershape::telemetry
