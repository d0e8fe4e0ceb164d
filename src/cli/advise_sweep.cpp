#include "advise_sweep.hpp"

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "advise_apply.hpp"
#include "powershape/advise/apply.hpp"
#include "powershape/advise/outcome_table.hpp"
#include "powershape/advise/settings_backend.hpp"
#include "powershape/experiment/command_backend.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/trace/open_source.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/signals.hpp"
#include "progress.hpp"

namespace powershape::cli {

namespace {

// What the GPU lets one set, from what NVML reports of it (clocks in 15 MHz steps, as NVIDIA's
// data-centre parts take them).
advise::SettingRange range_of(const telemetry::DeviceInfo& d) {
  if (!d.max_sm_clock_mhz.ok())
    throw unsupported("--sweep: the GPU's maximum SM clock cannot be read");
  advise::SettingRange r = advise::with_device_limits({}, d);
  r.min_mhz = r.max_mhz * advise::kLowestCapShare;
  r.clock_step_mhz = 15;
  return r;
}

}  // namespace

int sweep_settings(const SweepArgs& a) {
  if (a.command.empty()) throw invalid_input("--sweep: give the command to measure after --");
  restore_first("/sys");
  experiment::CommandBackend backend({a.command}, a.source);
  // What can be set is NVML's to say, whatever records the command's telemetry.
  const auto devices = trace::open_source("nvml", {})->devices();
  if (a.gpu < 0 || static_cast<std::size_t>(a.gpu) >= devices.size())
    throw invalid_input("--gpu: NVML sees " + std::to_string(devices.size()) + " GPU(s)");
  const advise::SettingRange range = range_of(devices[static_cast<std::size_t>(a.gpu)]);
  const auto settings = advise::candidate_settings(range, a.knobs, a.points);
  experiment::Objective objective = a.objective;
  if (objective.p_max_w <= 0) objective.p_max_w = range.default_limit_w;
  auto target = advise::nvml_target(a.gpu);
  util::forward_signals_to(0);  // a signal ends the sweep between runs; the setting is put back
  advise::SettingsBackend swept(backend, 0, *target, settings, advise::state_dir());
  std::printf("powershape advise --sweep on %s: %zu settings x %d rounds of '%s'\n",
              target->describe().c_str(), settings.size(), a.rounds,
              backend.config_name(0).c_str());
  std::fflush(stdout);
  // A run as found first, then the settings in rounds, each round's order shuffled (so that a
  // drift of heat or boost is not tied to a setting's place): compare's design, the settings its
  // configurations.
  experiment::Design design;
  design.rounds = a.rounds;
  design.window_s = 1;         // not used: a run lasts what the command takes
  design.warmup_max_s = 1e-9;  // one run
  design.on_round = round_progress(true);
  design.interrupted = [] { return util::received_signal() != 0; };
  const experiment::Result r = experiment::run_design(swept, design);
  if (r.interrupted) {
    std::printf("powershape: stopped by signal %d; every setting was put back\n",
                util::received_signal());
    return 128 + util::received_signal();
  }
  std::vector<advise::Outcome> out;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const experiment::ConfigResult& c = r.configs[i];
    advise::Outcome o;
    o.setting = settings[i];
    o.ms = c.ms_per_iteration;
    o.joules = c.j_per_iteration;
    o.time_ratio = c.time_ratio;
    o.energy_ratio = c.energy_ratio;
    o.mean_power_w = o.ms > 0 ? o.joules / (o.ms * 1e-3) : 0;
    out.push_back(o);
  }
  const std::size_t chosen = advise::choose(out, objective, a.max_slowdown, true);
  advise::print_outcomes(out, chosen, "ms/run", 1);
  nlohmann::json j = {{"objective", objective.describe()}, {"outcomes", nlohmann::json::array()}};
  for (const auto& x : out) j["outcomes"].push_back(to_json(x));
  j["recommended"] = to_json(out[chosen]);
  j["experiment"] = experiment::to_json(r);  // each run: its setting, round, time and telemetry
  std::printf("\nmeasured recommendation: %s (every setting put back)\n",
              out[chosen].setting.describe().c_str());
  if (!a.out.empty()) util::write_json_file(a.out, j);
  return 0;
}

}  // namespace powershape::cli
