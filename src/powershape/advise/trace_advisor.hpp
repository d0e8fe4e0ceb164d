#pragma once
// Settings predicted from passive telemetry alone: a trace's windows classed (analysis/phases),
// each busy class's power against the SM clock fitted from the clocks the GPU visited by itself
// (a card under its power cap visits many), and each window replayed at the clock a setting would
// leave it: P(f) = static + memory + activity x (V(f) / Vmax)^2 x f / fmax, time scaling as 1 / f
// in the share of it that is clock-bound (all of a compute-bound window, little of a memory-bound
// one). No setting is changed to learn this, so what it cannot see (a clock the GPU never ran at,
// the memory clock) it assumes, and its intervals carry those assumptions.
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "powershape/advise/setting.hpp"
#include "powershape/analysis/phases.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::advise {

// A GPU's voltage against its clock (a profile's V/f table), normalised to 1 at the maximum.
struct VoltageCurve {
  double max_mhz = 0;
  std::vector<std::pair<double, double>> table;  // (MHz, volts), ascending
  double shape(double mhz) const;                // (V(f) / V(fmax))^2 x f / fmax
};

// One busy class's fit of power against the shape of the clock: P = static_w + slope_w x shape.
struct ClassFit {
  analysis::PhaseClass cls;
  int windows = 0;
  double seconds = 0;
  double clock_lo_mhz = 0, clock_hi_mhz = 0;  // the clocks its windows visited
  double static_w = 0, slope_w = 0;
  double rms_w = 0;        // of the fit over its windows
  bool fitted = false;     // on its windows under the power cap; false: too few of them, too narrow
                           // a clock range, or an unphysical fit: static_w is the idle power then,
                           // and each window's own activity carries the rest
  double clock_share = 1;  // the share of its time that scales as 1 / clock
  bool share_learned = false;
};

struct TraceModel {
  std::vector<analysis::PhaseWindow> windows;
  // Each window's memory power above idle (from NVML's memory-scope power, else memory_w x its
  // memory utilisation): the bytes move whatever the SM clock, so this energy stays as it is.
  std::vector<double> memory_w;
  std::vector<ClassFit> classes;  // compute-bound, memory-bound, bursty
  double idle_w = 0;              // idle windows' mean power, else the lowest window's
  VoltageCurve volts;
  // From repeated regions (training steps) away from the power cap: step time = a + b / clock,
  // fitted on pooled steps' mean reported clocks; the share b / clock of a step that scales with
  // the clock. Steps at the cap are left out (the reported clock is not the real one there).
  int steps = 0;
  double step_clock_share = -1;  // -1: not learned
  std::string step_region;
};

struct TraceModelOptions {
  analysis::PhaseOptions phases;
  double memory_clock_share = 0.1;  // assumed where not learned: the profile's memory sensitivity
  // What a memory stream at full bandwidth draws beyond idle (the profile's memory_w), taken as
  // memory_w x NVML's memory utilisation where the trace has no memory-scope power; -1: unknown
  // (then all power above idle is taken to follow the SM clock, which overstates a memory-bound
  // window's saving).
  double memory_w = -1;
  // Idle power where the trace has no idle window (the profile's idle + leakage); -1: the lowest
  // window's power.
  double idle_w = -1;
};

// What a profile knows of its GPU that a trace does not show: the V/f curve, a memory stream's
// power and clock dependence, idle power.
VoltageCurve voltage_curve(const sim::Profile& p);
TraceModelOptions trace_options(const sim::Profile& p);

// Fits the model to GPU `gpu` of the trace. Throws std::runtime_error when the trace has too
// little busy time to say anything (under 2 busy windows).
TraceModel fit_trace_model(const trace::Trace& t, int gpu, const VoltageCurve& v,
                           const TraceModelOptions& o = {});

// The trace's time and energy under each setting (settings[0] the baseline, as found), with 95%
// bootstrap intervals over windows and over the assumed clock shares where they were not learned
// (fewer resamples, at least 50, for a long trace against many settings).
std::vector<Outcome> predict_from_trace(const TraceModel& m, const std::vector<Setting>& settings,
                                        uint64_t seed = 1, int resamples = 300);

}  // namespace powershape::advise
