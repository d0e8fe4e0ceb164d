#pragma once
#include <string>
#include <vector>

#include "powershape/telemetry/device_info.hpp"
#include "powershape/telemetry/region.hpp"
#include "powershape/telemetry/sample.hpp"
#include "powershape/telemetry/source.hpp"

namespace powershape::trace {

using telemetry::DeviceInfo;
using telemetry::Event;
using telemetry::Region;
using telemetry::Sample;

// Everything one recording holds, in memory.
struct Trace {
  std::string source;  // what recorded it: "nvml", "hwmon:/sys/class/hwmon", "sim:h200", ...
  std::vector<DeviceInfo> devices;
  std::vector<Sample>
      samples;  // as recorded: polls in time order, driver rows after the poll that harvested them
  std::vector<Region> regions;
  std::vector<Event> events;
  bool operator==(const Trace&) const = default;
};

}  // namespace powershape::trace
