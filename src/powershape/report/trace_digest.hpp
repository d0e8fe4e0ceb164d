#pragma once
// What the report shows of a trace, gathered a row at a time in two passes: the first learns its
// span, GPUs, signals and energy counter; the second bins every shown signal, summarises every
// window and gathers the power its swing section analyses. A recording far larger than memory
// fits: what stays is the bins, the windows' running figures, the energy counter's changes, the
// swing section's power on its grid and, during the first pass, 4 bytes a power reading (the gaps
// that give the reading interval).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/summary.hpp"
#include "powershape/report/bins.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::report {

struct TraceDigest {
  trace::Trace header;  // source, devices, regions, events, clock; no samples
  std::size_t rows = 0;
  int64_t t0_ns = 0;
  Bins bins;
  struct Series {
    telemetry::Signal signal;
    Extremes extremes;
  };
  struct Gpu {
    int index = 0;
    std::vector<Series> series;  // the shown signals it has
    FractionBins reasons;
  };
  std::vector<Gpu> gpus;
  std::vector<analysis::Summary> summary;  // empty when not asked for
  std::optional<analysis::PowerInput> power;
  std::string no_power;  // why there is none
};

// The signals the page draws, in its order, with the panel and label each is drawn under.
struct Shown {
  telemetry::Signal signal;
  const char* panel;
  const char* label;
  const char* unit;
};
inline constexpr Shown kShown[] = {
    {telemetry::Signal::kDriverPower, "power", "driver buffer (50 Hz)", "W"},
    {telemetry::Signal::kPowerInstant, "power", "instantaneous", "W"},
    {telemetry::Signal::kPowerAverage, "power", "average field", "W"},
    {telemetry::Signal::kPowerUsage, "power", "power usage (1 s average)", "W"},
    {telemetry::Signal::kMemoryPower, "power", "memory", "W"},
    {telemetry::Signal::kSmClock, "SM clock", "SM clock", "MHz"},
    {telemetry::Signal::kMemClock, "memory clock", "memory clock", "MHz"},
    {telemetry::Signal::kGpuTemp, "temperature", "GPU", "C"},
    {telemetry::Signal::kMemTemp, "temperature", "memory", "C"},
    {telemetry::Signal::kUtilGpu, "utilisation", "GPU", "%"},
    {telemetry::Signal::kUtilMem, "utilisation", "memory", "%"},
};

// From a trace in memory (its rows in any order). Throws invalid_input when it has no samples.
TraceDigest digest(const trace::Trace& t, std::size_t max_bins, bool summary);
// From a trace file read twice, row by row; none when a signal's readings are out of time order
// (another tool's file: read it whole then).
std::optional<TraceDigest> digest_file(const std::string& path, std::size_t max_bins, bool summary);

}  // namespace powershape::report
