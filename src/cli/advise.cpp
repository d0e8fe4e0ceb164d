// powershape advise: the SM clock cap, power limit or power mode that minimises energy (or EDP,
// or Zeus' cost) within a slowdown bound, predicted on a simulated device or from a trace.
#include <cstdio>
#include <optional>
#include <string>

#include "advise_apply.hpp"
#include "powershape/advise/advice_table.hpp"
#include "powershape/advise/advise_run.hpp"
#include "powershape/advise/mfu_power.hpp"
#include "powershape/advise/outcome_table.hpp"
#include "powershape/advise/sweep.hpp"
#include "powershape/analysis/grid_spec.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/progress.hpp"
#include "powershape/util/signals.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct AdviseArgs {
  advise::AdviseRequest q;
  std::string knobs, out, mfu, grid;
  std::optional<analysis::GridSpec> grid_spec;  // read from `grid`; q.grid points at it
  int points = 0;                               // 0: 8 a knob simulated, 4 measured (--sweep)
  int rounds = 2;
  bool sweep = false, table = false;
  std::string source = "nvml";
  double max_slowdown_pct = -1, peak_tflops = 0;
  ApplyArgs apply;
};

int run_mfu(const AdviseArgs& a) {
  const sim::Profile p = sim::load_profile(a.q.profile.empty() ? "h200" : a.q.profile);
  const double peak = a.peak_tflops > 0 ? a.peak_tflops * 1e12 : p.peak_flops_per_s();
  const auto points = advise::read_mfu_points(a.mfu, peak);
  advise::print_mfu_fit(
      stdout, a.mfu, peak,
      a.peak_tflops > 0 ? "--peak-tflops" : p.name + "'s products at its maximum clock", points,
      advise::fit_mfu(points), p.power_limit_w);
  return 0;
}

// advise --sweep -- CMD: each candidate setting measured under the command (advise/sweep.hpp).
int run_sweep(const AdviseArgs& a) {
  if (a.apply.command.empty()) throw invalid_input("--sweep: give the command to measure after --");
  advise::SweepRequest q;
  q.knobs = advise::parse_knobs(a.knobs.empty() ? "clock,power" : a.knobs);
  q.objective = experiment::parse_objective(a.q.objective, 1);
  q.command = a.apply.command;
  q.source = a.source;
  q.gpu = a.q.gpu;
  q.points = a.points > 0 ? a.points : 4;
  q.rounds = a.rounds;
  restore_first("/sys");  // what a run that did not finish left set, first
  q.max_slowdown = a.max_slowdown_pct / 100;
  q.on_start = [](const std::string& what) {
    std::printf("powershape advise --sweep: %s\n", what.c_str());
    std::fflush(stdout);
  };
  q.on_round = util::round_progress(true);
  q.interrupted = [] { return util::received_signal() != 0; };
  util::forward_signals_to(0);  // a signal ends the sweep between runs; the setting is put back
  experiment::Objective objective;
  const advise::Sweep r = advise::sweep_command(q, &objective);
  if (r.experiment.interrupted) {
    std::printf("powershape: stopped by signal %d; every setting was put back\n",
                util::received_signal());
    return 128 + util::received_signal();
  }
  advise::print_outcomes(stdout, r.outcomes, r.chosen, "ms/run", 1);
  std::printf("\nmeasured recommendation: %s (every setting put back)\n",
              r.outcomes[r.chosen].setting.describe().c_str());
  if (!a.out.empty()) util::write_json_file(a.out, advise::to_json(r, objective));
  return 0;
}

// The bound a recommendation keeps unless --max-slowdown says otherwise: energy bought with any
// slowdown (a clock cap at +44% time) is seldom what a job wants.
constexpr double kDefaultMaxSlowdownPct = 10;

int run_advise(AdviseArgs& a) {
  a.apply.gpu = a.q.gpu;
  if (a.max_slowdown_pct < 0) a.max_slowdown_pct = kDefaultMaxSlowdownPct;
  if (a.apply.restore) return restore_left(a.apply);
  if (a.apply.force) throw invalid_input("--force: only with --restore");
  if (a.sweep) return run_sweep(a);
  if (!a.apply.command.empty() && !a.apply.apply)
    throw invalid_input("a command after -- runs only with --apply or --sweep");
  if (!a.mfu.empty()) return run_mfu(a);
  // A spec that cannot be read is said before the trace is read and fitted.
  if (!a.grid.empty()) a.q.grid = &a.grid_spec.emplace(analysis::load_grid_spec(a.grid));
  if (!a.knobs.empty()) a.q.knobs = advise::parse_knobs(a.knobs);
  a.q.max_slowdown = a.max_slowdown_pct / 100;
  if (a.points > 0) a.q.points = a.points;
  a.q.on_start = [](const std::string& what) {
    std::printf("powershape advise: %s\n", what.c_str());
    std::fflush(stdout);
  };
  const advise::AdviseRun r = advise::advise(a.q);
  advise::print_advise_run(stdout, r, a.table, "--table lists each",
                           "`powershape advise --apply` sets the choice, and a monitor around your "
                           "job then measures it");
  if (!a.out.empty()) util::write_json_file(a.out, advise::to_json(r));
  if (a.apply.apply) return apply_setting(a.apply, r.outcomes()[r.chosen()].setting);
  return 0;
}

}  // namespace

void add_advise(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "advise",
      "Recommend the SM clock cap, power limit or power mode that minimises energy within a "
      "slowdown bound");
  static AdviseArgs a;
  a.q.workload.workload = "lmhead";
  cmd->add_option("--trace", a.q.trace,
                  "Predict from a recorded trace (monitor -o T.csv): no setting is changed")
      ->transform(recording_named);
  cmd->add_option("--gpu", a.q.gpu, "The trace's GPU (default 0)")->check(CLI::Range(0, 1023));
  cmd->add_option("--grid", a.grid,
                  "A grid spec (a file, or grid-example) the recommendation must be predicted "
                  "within (with --trace or --device gpu)");
  cmd->add_option("--grid-gpus", a.q.grid_gpus,
                  "With --grid: the GPUs in step the trace's GPUs stand for (default 1)")
      ->check(finite_in(1, 1e8));
  cmd->add_option("--window", a.q.window_s, "Seconds per classified window of a trace (default 1)")
      ->check(finite_in(0.01, 3600));
  cmd->add_option("--profile", a.q.profile,
                  "The profile whose V/f curve a trace's GPU follows (default: matched by name)");
  add_workload_options(*cmd, a.q.workload, WorkloadUse::kSim);
  cmd->add_option(
      "--device", a.q.device,
      "With --workload: sim:PROFILE (default sim:h200) simulates each setting; gpu runs "
      "the workload as found and predicts from its trace");
  cmd->add_option("--gpu-seconds", a.q.gpu_seconds,
                  "With --device gpu: seconds the workload runs as found (default 30)")
      ->check(finite_in(2, 3600));
  cmd->add_option("--power-mode", a.q.power_mode, "The profile's power mode the device is in");
  cmd->add_option("--knobs", a.knobs,
                  "What may change: clock, power, mode (default clock,power; and mode where the "
                  "device has modes)");
  cmd->add_option("--objective", a.q.objective, "energy (default), time, edp or cost:ETA (Zeus)");
  cmd->add_option("--max-slowdown", a.max_slowdown_pct,
                  "Percent slower than as found a recommendation may be (default 10; 100: "
                  "twice as slow)")
      ->check(finite_in(0, 100));
  cmd->add_option("--points", a.points, "Coarse values a knob (default 8; 4 with --sweep)")
      ->check(CLI::Range(2, 200));
  cmd->add_option("--seconds", a.q.sim.seconds, "Simulated seconds a setting and seed (default 3)")
      ->check(finite_in(0.1, 600));
  cmd->add_option("--seeds", a.q.sim.seeds, "Seeds a setting (default 3)")
      ->check(CLI::Range(2, 20));
  cmd->add_option("--mfu", a.mfu,
                  "Fit the MFU power model to a probe --record folder (or data/h200) and report "
                  "where it holds");
  cmd->add_option("--peak-tflops", a.peak_tflops,
                  "With --mfu: the peak MFU is against (default: the profile's products at its "
                  "maximum clock; an H200's data sheet says 989 dense bf16)")
      ->check(finite_in(0.001, 100000));
  output(
      cmd->add_option("-o,--output", a.out, "Write every outcome and the recommendation as JSON"));
  cmd->add_flag("--table", a.table,
                "List every setting tried (default: the recommendation and the GPU as found)");
  add_apply_options(cmd, a.apply);
  cmd->add_flag("--sweep", a.sweep,
                "Measure the command after -- under each candidate setting, applied in turn and "
                "put back (root; never on a shared GPU)");
  cmd->add_option("--rounds", a.rounds, "With --sweep: rounds over the settings (default 2)")
      ->check(CLI::Range(2, 100));
  cmd->add_option("--source", a.source,
                  "With --sweep: the command's telemetry, nvml (default) or fake:TRACE.csv");
  cmd->callback([] { exit_code() = run_advise(a); });
}

}  // namespace powershape::cli
