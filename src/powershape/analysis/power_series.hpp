#pragma once
// Power on a uniform time grid: what the swing analysis (swing.hpp) works on. A GPU's readings
// arrive at uneven times and from several signals; a node sums its GPUs; a fleet sums nodes whose
// recordings were made apart. This file turns all of them into one series.
#include <string>
#include <vector>

#include "powershape/trace/trace.hpp"

namespace powershape::analysis {

// Sample i is the mean power over [t0_s + i dt_s, t0_s + (i + 1) dt_s).
struct PowerSeries {
  double t0_s = 0;  // on the clock the inputs share (the wall clock where it is known)
  double dt_s = 0;
  std::vector<double> w;
  double duration_s() const { return dt_s * static_cast<double>(w.size()); }
};

// The most samples a series holds (0.8 GB of doubles): a longer span at a finer resolution is
// refused, not allocated.
inline constexpr double kMaxSamples = 1e8;

// One source's readings in time order: seconds on the inputs' shared clock, and W.
struct Readings {
  std::vector<double> t_s, w;
};

// Each source's readings held until its next one and averaged over each interval of `dt_s`, then
// added, over the span every source covers (a source's last reading ends its span). Throws
// (invalid input) when that span holds less than two intervals.
PowerSeries sum_readings(const std::vector<Readings>& sources, double dt_s);
// The zeroed grid sum_readings adds into, over [from_s, to_s]; throws as it does (and beyond
// most_samples).
PowerSeries readings_grid(double from_s, double to_s, double dt_s,
                          double most_samples = kMaxSamples);

// The signal that stands for a GPU's power in `t`: of the instantaneous field and the driver's
// buffer samples, the one read more often; else NVML's power usage (a 1 s average on Hopper: it
// hides what is faster), else the power average. Throws (invalid input) when no GPU has any.
telemetry::Signal power_signal(const trace::Trace& t);
// The same from counts of each power signal's readings, gathered a row at a time.
struct PowerCounts {
  std::size_t instant = 0, driver = 0, usage = 0, average = 0;
  void add(const telemetry::Sample& row);
};
telemetry::Signal power_signal(const PowerCounts& c);

// Series added sample by sample over the span all of them cover, on the grid of the first (the
// others are resampled to it). Throws (invalid input) when they share less than two intervals.
PowerSeries sum_on_time(const std::vector<PowerSeries>& parts);

// `s` averaged onto a grid of `dt_s` starting at `t0_s`, `n` samples (held as a step function).
PowerSeries resample(const PowerSeries& s, double t0_s, double dt_s, std::size_t n);

}  // namespace powershape::analysis
