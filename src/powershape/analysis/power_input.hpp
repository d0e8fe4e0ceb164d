#pragma once
// The recordings a swing analysis reads, whatever made them, as one power series:
//  - a trace (powershape's CSV, a plain telemetry CSV, an nvidia-smi log): its GPUs summed;
//  - a Prometheus range query's JSON (/api/v1/query_range, resultType matrix) of one power metric
//    in W, such as DCGM_FI_DEV_POWER_USAGE or powershape_node_power_watts: its series summed;
//  - a meter's CSV, `t_s,power_w` (a site's or a simulated fleet's power, in W).
// Several files are nodes of one job: added on the wall clock where each knows it, else from
// their starts (aligned as if started together, which the result says).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "powershape/analysis/power_series.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::analysis {

struct PowerInput {
  PowerSeries power;   // t0_s from the earliest input's first reading
  double rated_w = 0;  // the GPUs' power limits added up; 0 where an input does not give them
  int gpus = 0;        // the GPUs (or series) added; 0 for a meter's CSV
  std::string signal;  // what stands for power: "power_instant", "DCGM_FI_DEV_POWER_USAGE", ...
  bool aligned_by_start = false;  // several inputs without a wall clock: lined up at their starts
  double reading_interval_s = 0;  // the coarsest input's median interval between readings
  // The regions named (a job's steps), (begin, end) on power's clock: the first recording's that
  // has them (nodes of one job step together).
  std::vector<std::pair<double, double>> regions_s;
};

// Reads every file and adds them on time, on a grid of `dt_s` (0: the coarsest input's reading
// interval, at least 1 ms). `region` non-empty keeps each trace's readings from the first begin to
// the last end of its regions of that name (a job's steps, without its start-up). Throws (invalid
// input) naming the file that cannot be read, holds no power or lacks the region.
PowerInput read_power_inputs(const std::vector<std::string>& paths, double dt_s,
                             const std::string& region = "");

// One trace's GPUs' power from `from_ns` to `to_ns` (steady ns, both included), summed on a grid
// of `dt_s` (0: the trace's reading interval, at least 1 ms); times from the trace's first sample.
PowerInput trace_power(const trace::Trace& t, int64_t from_ns, int64_t to_ns, double dt_s);

// The GPUs' power limits added up; 0 where a GPU's is not known, or a GPU is listed twice.
double rated_power_w(const std::vector<telemetry::DeviceInfo>& devices,
                     const std::vector<int>& gpus);

// Writes a series as a meter's CSV (t_s,power_w; each sample's start time from the series' t0),
// whole or not at all ("-": standard output).
void write_power_csv(const std::string& path, const PowerSeries& p);

}  // namespace powershape::analysis
