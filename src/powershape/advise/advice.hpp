#pragma once
// advise's two predictions as library calls (the CLI only prints them): from a recorded trace
// (passive telemetry, no setting changed) and on a simulated device (each setting simulated).
// Both also give the learned selector's clock-cap pick for comparison.
#include <optional>
#include <string>
#include <vector>

#include "powershape/advise/setting.hpp"
#include "powershape/advise/sim_advisor.hpp"
#include "powershape/advise/trace_advisor.hpp"
#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/phases.hpp"
#include "powershape/experiment/tune.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/trace/trace.hpp"
#include "powershape/workload/plan.hpp"

namespace powershape::advise {

struct TraceAdviceOptions {
  int gpu = 0;
  std::string profile;  // the V/f curve's profile; empty: the one whose GPU the trace names
  double window_s = 1;  // seconds per classified window
  std::vector<Knob> knobs = {Knob::kClock, Knob::kPowerLimit};
  experiment::Objective objective;  // its p_max_w is set from the device's limit
  double max_slowdown = -1;         // a fraction; -1: any
  // A grid spec the choice must be within (advise/grid_check.hpp), the trace's power scaled to
  // grid_gpus GPUs in step; none: nullptr. Outlives the call.
  const analysis::GridSpec* grid = nullptr;
  double grid_gpus = 1;
};

struct TraceAdvice {
  telemetry::DeviceInfo device;  // as the trace records it
  std::string profile;           // the profile used for the V/f curve; empty: a generic curve
  std::string generic_why;       // with a generic curve: where its maximum clock came from
  TraceModel model;
  std::vector<analysis::PhaseShare> shares;
  experiment::Objective objective;  // with the device's limit as p_max_w
  std::vector<Outcome> outcomes;    // the baseline first
  std::size_t chosen = 0;
  std::optional<Outcome> selector_pick;  // the learned selector's cap, predicted as the others
  // With a grid spec: the GPU as found against it, and the choice within it, in a line and as
  // JSON (as found's check, then the chosen one's).
  std::string grid_said;
  nlohmann::json grid;
};

// `label` names the trace in errors (a file, or the GPU run that recorded it).
TraceAdvice from_trace(const trace::Trace& t, const std::string& label,
                       const TraceAdviceOptions& o);

struct SimAdvice {
  std::vector<Outcome> outcomes;  // the baseline first
  std::size_t chosen = 0;
  int simulations = 0;
  std::size_t every = 0;  // settings every settable value would make
  experiment::Objective objective;
  Outcome selector_pick;
};

// knobs empty: clock and power, or clock and mode where the profile has power modes. points: the
// coarse values the search tries a knob.
SimAdvice on_simulator(const sim::Profile& p, const workload::Plan& plan, std::vector<Knob> knobs,
                       experiment::Objective objective, double max_slowdown, int points,
                       const SimAdviseOptions& o);

}  // namespace powershape::advise
