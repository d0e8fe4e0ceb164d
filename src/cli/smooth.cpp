// `powershape smooth`: a job run under a power floor held by filler work on its GPU, with the
// floor ramped up before it and down after it (shape/smooth.hpp, docs/grid.md).
#include "powershape/shape/smooth.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/swing.hpp"
#include "powershape/analysis/swing_print.hpp"
#include "powershape/experiment/gpu_plugin.hpp"
#include "powershape/trace/open_source.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/output_lock.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct SmoothArgs {
  std::string floor, gap, out_csv, spec = analysis::kDefaultGridSpec;
  double ramp_w_per_s = 0, back_off_w = 0, interval_ms = 10;
  bool pace = false;
  int gpu = 0;
  std::vector<std::string> command;
};

void warn(const std::string& what) { std::fprintf(stderr, "powershape: %s\n", what.c_str()); }

int run_smooth(const SmoothArgs& a) {
  if (a.pace && !(a.ramp_w_per_s > 0))
    throw CLI::ValidationError("--pace", "paces the job at the --ramp rate: give one");
  const auto claimed =
      util::claim_outputs({{a.out_csv, "-o", util::OutputLock::Written::kLive}}, {a.spec});
  const analysis::GridSpec spec = analysis::load_grid_spec(a.spec);
  auto source = trace::open_source("nvml", {a.gpu});
  shape::SmoothJob job;
  job.command = a.command;
  job.gap_region = a.gap;
  job.csv = a.out_csv;
  job.floor.floor_w = shape::floor_watts(shape::parse_floor(a.floor), source->devices().at(0));
  job.floor.ramp_w_per_s = a.ramp_w_per_s;
  job.floor.back_off_w = a.back_off_w;
  job.floor.marked = !a.gap.empty();
  job.pace = a.pace;
  job.ramp_window_s = spec.ramp_window_s;
  job.interval_ms = a.interval_ms;
  const std::string uuid = source->devices().at(0).uuid;
  const shape::SmoothRun run = shape::smooth_job(
      *source, [&] { return experiment::open_gpu_filler(uuid); }, job, warn);
  const shape::SmoothResult& r = run.result;
  const trace::Trace& t = run.trace;
  shape::print_smoothed(stdout, r, job.floor, a.pace);
  if (!t.samples.empty()) {
    const analysis::PowerInput in =
        analysis::trace_power(t, t.samples.front().t_ns, t.samples.back().t_ns, 0);
    analysis::SwingOptions sw;
    sw.ramp_window_s = spec.ramp_window_s;
    sw.range_window_s = spec.range_window_s;
    sw.rated_w = in.rated_w;
    try {
      analysis::print_swing(stdout, analysis::analyse_swing(in.power, spec, sw), spec);
    } catch (const std::runtime_error& e) {
      std::printf("swing    not analysed: %s\n", e.what());
    }
  }
  bool failed = run.file_failed;
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
  static SmoothArgs a;
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
  output(cmd->add_option("-o,--output", a.out_csv, "Write the trace as CSV"));
  cmd->add_option("--spec", a.spec,
                  "The grid spec the run's swing is checked against (default grid-example)");
  cmd->add_option("command", a.command, "The command to run, after --")->required();
  cmd->positionals_at_end();
  cmd->callback([] { exit_code() = run_smooth(a); });
}

}  // namespace powershape::cli
