#include "powershape/advise/advice.hpp"

#include <algorithm>
#include <cmath>

#include "powershape/advise/grid_check.hpp"
#include "powershape/advise/selector.hpp"
#include "powershape/analysis/series.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/sim/simulator.hpp"
#include "powershape/util/error.hpp"

namespace powershape::advise {

namespace {

// The grid spec as a constraint on the trace's predicted settings: the choice moves to the best
// setting predicted within it.
void choose_within(TraceAdvice& r, const trace::Trace& t, const analysis::GridSpec& spec,
                   double gpus, double max_slowdown) {
  const int64_t begin = t.samples.front().t_ns, end = t.samples.back().t_ns;
  const GridCheck as_found = check_runs("as found", t, {{begin, end}}, spec, gpus);
  GridCheck chosen;
  r.chosen = choose_within_grid(r.outcomes, r.objective, max_slowdown, as_found, t, begin, end,
                                spec, gpus, &chosen);
  char head[160];
  std::snprintf(head, sizeof head, "grid spec %s, %g GPU%s in step: as found ", spec.name.c_str(),
                gpus, gpus == 1 ? "" : "s");
  r.grid_said = head + as_found.describe();
  if (r.chosen != 0)
    r.grid_said += "; " + chosen.name + ", predicted, " + chosen.describe();
  else if (!as_found.pass())
    r.grid_said += "; no setting is predicted within it";
  r.grid = nlohmann::json::array({to_json(as_found)});
  if (r.chosen != 0) r.grid.push_back(to_json(chosen));
}

}  // namespace

TraceAdvice from_trace(const trace::Trace& t, const std::string& label,
                       const TraceAdviceOptions& o) {
  TraceAdvice r;
  int gpus = static_cast<int>(t.devices.size());
  for (const auto& row : t.samples) gpus = std::max(gpus, row.gpu + 1);
  if (o.gpu < 0 || o.gpu >= gpus)
    throw invalid_input("gpu", label + " has " + std::to_string(gpus) + " GPU(s)");
  // A trace without device lines (an older recording) describes its GPU through its profile.
  if (static_cast<std::size_t>(o.gpu) < t.devices.size())
    r.device = t.devices[static_cast<std::size_t>(o.gpu)];
  r.profile = o.profile.empty() ? sim::profile_for_gpu(r.device.name) : o.profile;
  VoltageCurve v;
  SettingRange range;
  TraceModelOptions mo;
  if (!r.profile.empty()) {
    const sim::Profile p = sim::load_profile(r.profile);
    v = voltage_curve(p);
    range = setting_range(p);
    mo = trace_options(p);
  } else {
    double fmax = r.device.max_sm_clock_mhz.ok() ? r.device.max_sm_clock_mhz.value : 0;
    r.generic_why = "the recorded maximum clock";
    if (!(fmax > 0)) {
      // A log that names neither the GPU nor its clocks (nvidia-smi --query-gpu without name):
      // the highest clock it ran, which a GPU under load reaches at its boost.
      for (const auto& p : analysis::series(t, o.gpu, telemetry::Signal::kSmClock))
        fmax = std::max(fmax, static_cast<double>(p.value));
      r.generic_why = "the trace's highest clock taken as the maximum";
    }
    if (!(fmax > 0)) {
      std::string names;
      for (const auto& n : sim::profile_names()) names += (names.empty() ? "" : ", ") + n;
      throw invalid_input(
          "profile", label + ": " +
                         (r.device.name.empty() ? std::string("it names no GPU")
                                                : "no profile matches '" + r.device.name + "'") +
                         " and records no SM clock: name the GPU's profile (" + names + ")");
    }
    v = {fmax, {{fmax * 0.25, 0.7}, {fmax, 1.0}}};  // a generic V/f shape
    range.min_mhz = fmax * 0.25;
    range.max_mhz = fmax;
  }
  mo.phases.window_s = o.window_s;
  range.modes.clear();  // a trace's GPU is an NVML one: no power modes
  range = with_device_limits(range, r.device);
  r.objective = o.objective;
  r.objective.p_max_w = range.default_limit_w;
  r.model = fit_trace_model(t, o.gpu, v, mo);
  r.shares = analysis::phase_shares(r.model.windows);
  auto settings = exhaustive_settings(range, o.knobs);
  if (settings.size() > 400) settings = candidate_settings(range, o.knobs, 40);
  r.outcomes = predict_from_trace(r.model, settings);
  r.chosen = choose(r.outcomes, r.objective, o.max_slowdown, true);
  // The selector's cap, read as the outcome of the nearest cap predicted.
  const double mhz = range.snap_clock_mhz(
      load_selector().predict(features_of(
          t, o.gpu, range.default_limit_w > 0 ? range.default_limit_w : 1, range.max_mhz)) *
      range.max_mhz);
  for (const auto& x : r.outcomes) {
    if (x.setting.clock_cap_mhz > 0 &&
        (!r.selector_pick || std::abs(x.setting.clock_cap_mhz - mhz) <
                                 std::abs(r.selector_pick->setting.clock_cap_mhz - mhz)))
      r.selector_pick = x;
  }
  if (o.grid != nullptr) choose_within(r, t, *o.grid, o.grid_gpus, o.max_slowdown);
  return r;
}

SimAdvice on_simulator(const sim::Profile& p, const workload::Plan& plan, std::vector<Knob> knobs,
                       experiment::Objective objective, double max_slowdown, int points,
                       const SimAdviseOptions& o) {
  SimAdvice r;
  // A Jetson's power budget is set through its modes (nvpmodel), its clock through devfreq.
  if (knobs.empty())
    knobs = p.power_modes.empty() ? std::vector<Knob>{Knob::kClock, Knob::kPowerLimit}
                                  : std::vector<Knob>{Knob::kClock, Knob::kMode};
  objective.p_max_w = p.power_limit_w;
  r.objective = objective;
  const auto found = search_settings(p, plan, knobs, objective, max_slowdown, points, o);
  r.outcomes = found.outcomes;
  r.chosen = found.chosen;
  r.simulations = found.simulations;
  r.every = exhaustive_settings(setting_range(p), knobs).size();
  // The selector's pick from a short run as found, simulated like the rest.
  sim::SimOptions so;
  so.seconds = 2;
  so.lead_in_s = 0;
  so.tail_s = 0;
  so.step_s = o.step_s;
  const auto run = sim::simulate(p, plan, so);
  const auto range = setting_range(p);
  const Setting s{range.snap_clock_mhz(load_selector().predict(
                                           features_of(run.trace, 0, p.power_limit_w, p.max_mhz)) *
                                       p.max_mhz),
                  0, ""};
  r.selector_pick = simulate_settings(p, plan, {Setting{}, s}, o)[1];
  return r;
}

}  // namespace powershape::advise
