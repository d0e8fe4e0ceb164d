#pragma once
// trace_power (power_input.hpp) for a trace read a row at a time, whatever its length: a first
// pass counts each power signal and keeps each GPU's gaps between readings (4 bytes a reading),
// which give the signal, each GPU's span and the reading interval; the second adds each reading,
// held until the next, into one grid. Each GPU's readings must come in time order. The series
// equals trace_power's to the rounding of sums taken in another order.
#include <cstdint>
#include <map>
#include <vector>

#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/power_series.hpp"

namespace powershape::analysis {

class TracePowerStream {
 public:
  // `first_ns`: the trace's first row's time (the series' times count from it).
  explicit TracePowerStream(int64_t first_ns) : first_ns_(first_ns) {}
  void plan(const telemetry::Sample& row);  // the first pass
  // Between the passes: throws invalid_input as trace_power does (no power, too short a span, a
  // grid of more than most_samples).
  void start(const std::vector<telemetry::DeviceInfo>& devices, double most_samples = kMaxSamples);
  void add(const telemetry::Sample& row);  // the second pass
  PowerInput finish();

 private:
  struct Gpu {
    int64_t first_ns = 0, last_ns = 0;
    std::size_t readings = 0;
    std::vector<uint32_t> gaps_ns;  // a gap past 4.29 s is kept apart
    std::vector<uint64_t> long_gaps_ns;
  };
  struct Held {
    bool any = false;
    double t_s = 0, w = 0;
  };
  int64_t first_ns_;
  PowerCounts counts_;
  std::map<telemetry::Signal, std::map<int, Gpu>> seen_;  // per candidate signal
  telemetry::Signal signal_ = telemetry::Signal::kPowerUsage;
  PowerInput out_;
  std::map<int, Held> last_;  // per GPU in the sum
};

}  // namespace powershape::analysis
