#include "advise_sweep.hpp"

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "advise_apply.hpp"
#include "powershape/advise/apply.hpp"
#include "powershape/advise/outcome_table.hpp"
#include "powershape/advise/sweep.hpp"
#include "powershape/experiment/command_backend.hpp"
#include "powershape/trace/open_source.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/progress.hpp"
#include "powershape/util/signals.hpp"

namespace powershape::cli {

int sweep_settings(const SweepArgs& a) {
  if (a.command.empty()) throw invalid_input("--sweep: give the command to measure after --");
  restore_first("/sys");
  experiment::CommandBackend backend({a.command}, a.source);
  // What can be set is NVML's to say, whatever records the command's telemetry.
  const auto devices = trace::open_source("nvml", {})->devices();
  if (a.gpu < 0 || static_cast<std::size_t>(a.gpu) >= devices.size())
    throw invalid_input("--gpu: NVML sees " + std::to_string(devices.size()) + " GPU(s)");
  const advise::SettingRange range = advise::sweep_range(devices[static_cast<std::size_t>(a.gpu)]);
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
  experiment::Design design;
  design.rounds = a.rounds;
  design.on_round = util::round_progress(true);
  design.interrupted = [] { return util::received_signal() != 0; };
  const advise::Sweep r = advise::sweep(swept, design, objective, a.max_slowdown);
  if (r.experiment.interrupted) {
    std::printf("powershape: stopped by signal %d; every setting was put back\n",
                util::received_signal());
    return 128 + util::received_signal();
  }
  advise::print_outcomes(r.outcomes, r.chosen, "ms/run", 1);
  std::printf("\nmeasured recommendation: %s (every setting put back)\n",
              r.outcomes[r.chosen].setting.describe().c_str());
  if (!a.out.empty()) util::write_json_file(a.out, advise::to_json(r, objective));
  return 0;
}

}  // namespace powershape::cli
