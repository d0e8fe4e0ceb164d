// `powershape optimize -- CMD`: the options and what is printed; the work is optimize::run.
#include "powershape/optimize/optimize.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "advise_apply.hpp"
#include "powershape/advise/hold.hpp"
#include "powershape/analysis/grid_spec.hpp"
#include "powershape/optimize/optimize_table.hpp"
#include "powershape/report/html_report.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/int_list.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/printable.hpp"
#include "powershape/workload/lmhead_options.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct OptimizeArgs {
  optimize::Options o;
  bool apply = false;
  std::string chunks = "1,2,4,8,16", out, report, grid;
  double max_slowdown_pct = 5;
};

int run_optimize(OptimizeArgs& a) {
  optimize::check_environment();
  const auto claimed = util::claim_outputs({{a.out, "-o"}, {a.report, "--report"}});
  a.o.chunks = util::parse_int_list(a.chunks, "chunks");
  a.o.max_slowdown = a.max_slowdown_pct / 100;
  if (a.apply) {
    restore_first("/sys");  // what a run that did not finish left set, first
    a.o.apply_target = [] { return advise::target_for("/sys", 0); };
  }
  // Stages on a terminal only: in a log, an error stays the only line.
  if (isatty(STDERR_FILENO) != 0) {
    a.o.progress = [](const std::string& line) {
      std::fprintf(stderr, "optimize: %s\n", line.c_str());
    };
  }
  if (!a.grid.empty()) a.o.grid = analysis::load_grid_spec(a.grid);
  if (!a.o.floors.empty()) {
    std::error_code ec;
    a.o.smooth_exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  }
  optimize::Result r = optimize::run(a.o);
  if (a.o.source.rfind("fake:", 0) == 0)
    r.notes.push_back(
        "the telemetry is a replay (" + a.o.source +
        "): its power is the recording's, not this job's, so the job's energy here follows the "
        "time it took; on a GPU it is measured");
  std::printf("powershape optimize on %s, objective %s, %.0f s of a %.0f s budget\n",
              r.device.c_str(), r.objective.describe().c_str(), r.elapsed_s, a.o.budget_s);
  optimize::print_result(stdout, r, a.o.tokens_per_step, a.apply, "--apply measures it");
  if (!a.out.empty()) util::write_json_file(a.out, optimize::to_json(r));
  if (!a.report.empty()) {
    report::ReportInputs in;
    in.title = "powershape optimize: " + r.candidates.front() + " and what was tried";
    in.trace = r.trace;
    report::write_report(a.report, in);
  }
  if (!r.failure.empty()) {  // after the outputs: the runs measured before it are kept
    std::fprintf(stderr, "powershape optimize: %s\n", r.failure.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void add_optimize(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "optimize",
      "Your job, diagnosed and improved: throttling, the chunk count and power settings, one "
      "recommendation");
  static OptimizeArgs a;
  cmd->add_option("--objective", a.o.objective, "time (default), energy, edp or cost:ETA (Zeus)")
      ->check(checked_by([](const std::string& s) { experiment::parse_objective(s, 0); }));
  cmd->add_option("--max-slowdown", a.max_slowdown_pct,
                  "Percent slower than as found a recommendation may be (default 5)")
      ->check(finite_in(0.01, 100));
  cmd->add_option("--budget", a.o.budget_s, "Seconds it may take in all (default 600)")
      ->check(finite_in(1, 7 * 86400));
  cmd->add_option("--chunks", a.chunks,
                  "Chunk counts tried through POWERSHAPE_CHUNKS or {chunks} (default 1,2,4,8,16)")
      ->check(checked_by([](const std::string& s) {
        optimize::chunk_commands({"job"}, util::parse_int_list(s, "chunks"));
      }));
  cmd->add_option("--tokens-per-step", a.o.tokens_per_step, "Tokens a step, for tokens/s")
      ->check(finite_in(0, 1e12));
  cmd->add_option("--region", a.o.region, "The steps' region name (default: the first marked)");
  cmd->add_option("--profile", a.o.profile,
                  "The profile whose V/f curve the GPU follows (default: matched by name)");
  cmd->add_flag("--apply", a.apply,
                "Measure the predicted power limit or clock cap: set for a run at a time, put back "
                "after each (needs root; as advise --apply)");
  cmd->add_option("--grid", a.grid,
                  "A grid spec (a file, or grid-example) the recommendation must be within: each "
                  "configuration's runs held to it");
  cmd->add_option("--grid-gpus", a.o.grid_gpus,
                  "With --grid: the GPUs in step the job's GPU stands for (default 1)")
      ->check(finite_in(1, 1e8));
  cmd->add_option("--floor", a.o.floors,
                  "A power floor raced as one more configuration (W or N%; repeat for several): "
                  "the job under `powershape smooth --floor` (a GPU)")
      ->check(checked_by([](const std::string& f) {
        optimize::Options o;
        o.floors = {f};
        o.smooth_exe = "powershape";
        optimize::floor_commands({"job"}, o);
      }));
  cmd->add_option("--floor-gap", a.o.floor_gap,
                  "With --floor: the region the job marks its gaps with (smooth --gap)");
  cmd->add_option("--floor-ramp", a.o.floor_ramp_w_per_s, "With --floor: smooth --ramp, W/s")
      ->check(finite_in(1, 1e7));
  cmd->add_option(
      "--source", a.o.source,
      "nvml (default), fake:TRACE.csv (fake:h200/gemm_sustained: a shipped one) or hwmon[:ROOT]");
  cmd->add_option("--seed", a.o.seed, "Seed of the run order (default 1)")->check(seed_value());
  output(cmd->add_option("-o,--output", a.out, "Write everything measured and the choice as JSON"));
  output(cmd->add_option("--report", a.report,
                         "Write an HTML report: each run's telemetry, side by side"));
  cmd->add_option("command", a.o.command, "Your job, after --")->required();
  cmd->positionals_at_end();
  cmd->callback([] { exit_code() = run_optimize(a); });
}

}  // namespace powershape::cli
