#pragma once
#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/telemetry/device_info.hpp"
#include "powershape/telemetry/region.hpp"
#include "powershape/telemetry/sample.hpp"

namespace powershape::telemetry {

// One process's share of a GPU as the driver sampled it (nvmlDeviceGetProcessUtilization): the
// percent of the driver's sampling period that the process had a kernel running (sm_pct) and was
// reading or writing memory (mem_pct). Not its power: what each process drew is estimated from
// these (analysis/process_energy.hpp).
struct ProcessSample {
  int64_t t_ns = 0;  // the driver's sample time, on the steady clock
  int gpu = 0;
  int64_t pid = 0;
  int sm_pct = 0, mem_pct = 0;
  std::string name;  // /proc/PID/comm where it could be read (another container's: "")
  bool operator==(const ProcessSample&) const = default;
};

struct Event {
  int64_t t_ns = 0;
  int gpu = -1;  // -1: not about one GPU
  std::string what;
  bool operator==(const Event&) const = default;
};

using SignalSet = std::bitset<kSignalCount>;
inline SignalSet all_signals() { return SignalSet().set(); }

// Something that reports GPU telemetry: NVML, Jetson hwmon rails, a recorded trace, the simulator.
// Calls for one GPU come from one thread at a time; after the sampler gives up on a call that did
// not return, other GPUs may be polled from a new thread while it is still inside.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::string describe() const = 0;
  virtual const std::vector<DeviceInfo>& devices() const = 0;
  // Reads the signals `which` of device `gpu` (an index into devices()) now; the rest come back
  // kNotRead, or read anyway where reading them costs nothing.
  virtual Sample poll(int gpu, const SignalSet& which) = 0;
  // What reading each signal of `gpu` costs, measured by the source; 0 where cheap or unknown.
  virtual std::array<int64_t, kSignalCount> read_cost_ns(int /*gpu*/) const { return {}; }
  // Rows buffered by the source since the last call (the driver's power samples), oldest first.
  virtual std::vector<Sample> drain(int /*gpu*/) { return {}; }
  // How far back drain() reaches: rows older than this are gone. 0: unknown, or nothing buffered.
  virtual int64_t buffer_ns(int /*gpu*/) const { return 0; }
  // Things worth recording that are not readings (a counter that went back), oldest first.
  virtual std::vector<Event> take_events() { return {}; }
  // Regions the source itself places (a replayed trace's), once ended, on the steady clock.
  virtual std::vector<Region> take_regions() { return {}; }
  // Each process's utilization samples the driver took on `gpu` since the last call, oldest
  // first; none where the source cannot tell processes apart.
  virtual std::vector<ProcessSample> process_samples(int /*gpu*/) { return {}; }
};

}  // namespace powershape::telemetry
