// `powershape smooth`: a job run under a power floor held by filler work on its GPU, with the
// floor ramped up before it and down after it (shape/smooth.hpp, docs/grid.md).
#include <cstdio>
#include <string>

#include "powershape/experiment/smooth_run.hpp"
#include "powershape/shape/floor_controller.hpp"
#include "powershape/util/output_lock.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

void warn(const std::string& what) { std::fprintf(stderr, "powershape: %s\n", what.c_str()); }

int run_smooth(const experiment::SmoothRequest& a) {
  if (a.pace && !(a.ramp_w_per_s > 0))
    throw CLI::ValidationError("--pace", "paces the job at the --ramp rate: give one");
  const auto claimed =
      util::claim_outputs({{a.csv, "-o", util::OutputLock::Written::kLive}}, {a.spec});
  const experiment::SmoothedJob s = experiment::smooth(a, warn);
  experiment::print_smoothed_job(stdout, s);
  const shape::SmoothResult& r = s.run.result;
  bool failed = s.run.file_failed;
  if (!r.filler_failure.empty()) {
    warn("the filler stopped during the run: " + r.filler_failure);
    failed = true;
  }
  if (r.interrupted) warn("interrupted: the ramps were cut short");
  return r.exit_code == 0 && failed ? 1 : r.exit_code;
}

}  // namespace

void add_smooth(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "smooth",
      "Run a command with its GPU's power held above a floor by filler work through the job's "
      "low phases, the floor ramped up before and down after it");
  static experiment::SmoothRequest a;
  cmd->add_option("--floor", a.floor, "The floor: W, or N% of the GPU's power limit")
      ->required()
      ->check(checked_by([](const std::string& s) { shape::parse_floor(s); }));
  cmd->add_option("--ramp", a.ramp_w_per_s,
                  "W/s: ramp the floor up from the power found before the job starts, and down "
                  "from the job's power after it ends (default: no ramps)")
      ->check(finite_in(0, 1e9));
  cmd->add_flag("--pace", a.pace,
                "Hold the job (its process group stopped) while its own power would rise faster "
                "than --ramp over the spec's ramp window: its first steps, and its return from a "
                "phase at the floor (a checkpoint)");
  cmd->add_option("--gap", a.gap,
                  "The region the job marks its gaps with (powershape mark, the Python Monitor): "
                  "fill exactly there; without, gaps are found in the power")
      ->check([](const std::string& s) { return s.empty() ? "expected a region name" : ""; });
  cmd->add_option("--back-off", a.back_off_w,
                  "W above the floor that mean the job's own work is back (default: a tenth of "
                  "the floor; without --gap)")
      ->check(finite_in(0, 1e5));
  cmd->add_option("--gpu", a.gpu, "The GPU (index) the job runs on (default 0)")
      ->check(CLI::Range(0, 1023));
  cmd->add_option("--interval", a.interval_ms, "Sampling period in ms (default 10)")
      ->check(finite_in(1, 1000));
  output(cmd->add_option("-o,--output", a.csv, "Write the trace as CSV"));
  cmd->add_option("--spec", a.spec,
                  "The grid spec the run's swing is checked against (default grid-example)");
  cmd->add_option("command", a.command, "The command to run, after --")->required();
  cmd->positionals_at_end();
  cmd->callback([] { exit_code() = run_smooth(a); });
}

}  // namespace powershape::cli
