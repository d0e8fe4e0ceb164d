#include "powershape/advise/sweep.hpp"

#include "powershape/advise/outcome_table.hpp"
#include "powershape/advise/selector.hpp"
#include "powershape/experiment/command_backend.hpp"
#include "powershape/trace/open_source.hpp"
#include "powershape/util/error.hpp"

namespace powershape::advise {

SettingRange sweep_range(const telemetry::DeviceInfo& d) {
  if (!d.max_sm_clock_mhz.ok())
    throw unsupported("the GPU's maximum SM clock cannot be read: no clock caps to sweep");
  SettingRange r = with_device_limits({}, d);
  r.min_mhz = r.max_mhz * kLowestCapShare;
  r.clock_step_mhz = 15;
  return r;
}

Sweep sweep(SettingsBackend& swept, experiment::Design design,
            const experiment::Objective& objective, double max_slowdown) {
  design.window_s = 1;         // not used: a run lasts what the command takes
  design.warmup_max_s = 1e-9;  // one run
  Sweep s;
  s.experiment = experiment::run_design(swept, design);
  if (s.experiment.interrupted) return s;
  for (std::size_t i = 0; i < swept.config_count(); ++i) {
    const experiment::ConfigResult& c = s.experiment.configs[i];
    Outcome o;
    o.setting = swept.setting(i);
    o.ms = c.ms_per_iteration;
    o.joules = c.j_per_iteration;
    o.time_ratio = c.time_ratio;
    o.energy_ratio = c.energy_ratio;
    o.mean_power_w = o.ms > 0 ? o.joules / (o.ms * 1e-3) : 0;
    s.outcomes.push_back(o);
  }
  s.chosen = choose(s.outcomes, objective, max_slowdown, true);
  return s;
}

nlohmann::json to_json(const Sweep& s, const experiment::Objective& objective) {
  nlohmann::json j = {{"objective", objective.describe()}, {"outcomes", nlohmann::json::array()}};
  for (const auto& x : s.outcomes) j["outcomes"].push_back(to_json(x));
  j["recommended"] = to_json(s.outcomes.at(s.chosen));
  j["experiment"] = experiment::to_json(s.experiment);
  return j;
}

Sweep sweep_command(const SweepRequest& q, experiment::Objective* objective) {
  experiment::CommandBackend backend({q.command}, q.source);
  // What can be set is NVML's to say, whatever records the command's telemetry.
  const auto devices = trace::open_source("nvml", {})->devices();
  if (q.gpu < 0 || static_cast<std::size_t>(q.gpu) >= devices.size())
    throw invalid_input("gpu", "NVML sees " + std::to_string(devices.size()) + " GPU(s)");
  const SettingRange range = sweep_range(devices[static_cast<std::size_t>(q.gpu)]);
  const auto settings = candidate_settings(range, q.knobs, q.points);
  *objective = q.objective;
  objective->p_max_w = range.default_limit_w;  // Zeus' cost weighs time by the GPU's limit
  auto target = nvml_target(q.gpu);
  SettingsBackend swept(backend, 0, *target, settings, state_dir());
  if (q.on_start)
    q.on_start(std::to_string(settings.size()) + " settings x " + std::to_string(q.rounds) +
               " rounds of '" + backend.config_name(0) + "' on " + target->describe());
  experiment::Design design;
  design.rounds = q.rounds;
  design.on_round = q.on_round;
  design.interrupted = q.interrupted;
  return sweep(swept, design, *objective, q.max_slowdown);
}

}  // namespace powershape::advise
