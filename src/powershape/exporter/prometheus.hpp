#pragma once
// A recording as Prometheus text exposition (version 0.0.4), for a scrape or node_exporter's
// textfile collector. Names and labels follow dcgm-exporter where they overlap (DCGM_FI_DEV_*,
// labels gpu, UUID, device, modelName, Hostname), so that its dashboards work unchanged; what it
// lacks comes as powershape_*: the power-capped and thermally throttled fractions and each
// clock-event reason's share over the last window, the energy and duration of the last region of
// each name, the node's totals (power, energy) beside each GPU's, and the node's power swings in
// the last minute in the grid's terms (ramp, range, period, band shares: docs/grid.md).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/analysis/process_energy.hpp"
#include "powershape/telemetry/rapl.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::exporter {

// Region series are bounded: the last region of each of the kMaxRegionNames names that ended
// most recently; older names are left out (their count in *names_left_out, when given).
inline constexpr std::size_t kMaxRegionNames = 100;
// The node's swings are measured over the last minute of the recording.
inline constexpr int64_t kSwingWindowNs = 60'000'000'000;

// The latest readings of each GPU in `t`, and shares over [from_ns, to_ns).
// `hostname` is the Hostname label (dcgm-exporter's: the node's name); empty: this machine's.
std::string prometheus_text(const trace::Trace& t, int64_t from_ns, int64_t to_ns,
                            std::size_t* names_left_out = nullptr, std::string hostname = "");

// The CPU's RAPL counters, each zone's in J (a counter that restarts where the hardware's wraps,
// as Prometheus' rate() expects); empty without zones or where none can be read.
std::string cpu_energy_text(const telemetry::RaplCounters& rapl);

// With tokens a step known (monitor --tokens-per-step): the last ended `step` region's energy over
// every GPU a token, as a gauge; empty without such a region or its energy.
std::string energy_per_token_text(const trace::Trace& t, double tokens_per_step);

// Each GPU's energy by process so far (analysis::ProcessEnergyTally; NVML's per-process samples),
// labelled gpu, pid and process (its name); "no process busy" has no pid. Empty without any.
std::string process_energy_text(const std::vector<analysis::ProcessEnergy>& totals);

}  // namespace powershape::exporter
