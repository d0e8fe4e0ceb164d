#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/telemetry/device_info.hpp"
#include "powershape/telemetry/region.hpp"
#include "powershape/telemetry/sample.hpp"
#include "powershape/telemetry/source.hpp"

namespace powershape::trace {

using telemetry::DeviceInfo;
using telemetry::Event;
using telemetry::ProcessSample;
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
  // Each process's share of each GPU as the driver sampled it, in time order (NVML; else none).
  std::vector<ProcessSample> processes;
  // The wall clock (UTC, ns since 1970) minus the steady clock the samples are on, when recorded
  // live; 0: not known (a simulation, an older file). Lines a trace up with other tools' traces.
  int64_t wall_minus_steady_ns = 0;
  bool operator==(const Trace&) const = default;
};

// The samples from `from` to `to` (steady ns, both ends included) with the trace's source and
// devices; no regions or events.
inline Trace samples_between(const Trace& t, int64_t from, int64_t to) {
  Trace out;
  out.source = t.source;
  out.devices = t.devices;
  for (const auto& s : t.samples) {
    if (s.t_ns >= from && s.t_ns <= to) out.samples.push_back(s);
  }
  return out;
}

}  // namespace powershape::trace
