#include <cstdio>
#include <string>
#include <vector>

#include "powershape/experiment/command_backend.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/experiment/result_table.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/progress.hpp"
#include "powershape/util/signals.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> words;  // after --: commands separated by :::
  std::vector<std::string> scan;   // -L NAME V1,V2,...
  std::string source = "nvml", out, region;
  experiment::Design design;
  double min_effect_pct = 0.5;
};

int run_compare(CompareArgs& a) {
  a.design.min_effect = a.min_effect_pct / 100;
  a.design.window_s = 1;  // not used: a run lasts what the command takes
  a.design.warmup_window_s = 0.01;
  a.design.on_round = util::round_progress(false);
  a.design.interrupted = [] { return util::received_signal() != 0; };
  experiment::CommandBackend backend(experiment::commands_from(a.words, a.scan), a.source,
                                     a.region);
  std::printf(
      "powershape compare on %s: %zu commands x %d rounds, interleaved and shuffled, after "
      "a warm-up on the first\n",
      backend.describe().c_str(), backend.config_count(), a.design.rounds);
  std::fflush(stdout);
  const experiment::Result r = experiment::run_design(backend, a.design);
  if (r.interrupted) {
    std::fprintf(stderr, "powershape: interrupted after %d of %d rounds%s\n", r.rounds_done,
                 a.design.rounds,
                 r.rounds_done < 2 ? ": under two, nothing to compare (the runs made are in -o)"
                                   : ": the finished rounds follow");
  }
  if (!r.configs.empty()) experiment::print_result(stdout, r);
  if (!a.out.empty()) util::write_json_file(a.out, experiment::to_json(r));
  return r.interrupted ? 128 + util::received_signal() : 0;
}

}  // namespace

void add_compare(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "compare", "Time and energy of commands, like hyperfine for GPUs: CMD ::: CMD, or -L scans");
  static CompareArgs a;
  a.design.rounds = 10;
  a.design.warmup_max_s = 30;
  cmd->add_option("-L,--parameter-list", a.scan,
                  "NAME V1,V2,...: run the command once per value, {NAME} replaced")
      ->expected(2);
  cmd->add_option("--rounds", a.design.rounds, "Rounds (default 10)")->check(CLI::Range(2, 1000));
  cmd->add_option("--warmup-max", a.design.warmup_max_s,
                  "Seconds of warm-up at most, until power and clock settle (default 30)")
      ->check(finite_in(0, 3600));
  cmd->add_option(
      "--source", a.source,
      "nvml (default), fake:TRACE.csv (fake:h200/gemm_sustained: a shipped one) or hwmon[:ROOT]");
  cmd->add_option("--min-effect", a.min_effect_pct,
                  "A difference under this many percent is called 'within' it (default 0.5)")
      ->check(finite_in(0, 50));
  cmd->add_option("--seed", a.design.seed, "Seed of the run order (default 1)")
      ->check(seed_value());
  cmd->add_option("--region", a.region,
                  "Measure by the regions of this name the commands mark (default: the first "
                  "name they mark; none: whole runs)");
  output(cmd->add_option("-o,--output", a.out, "Write every run as JSON"));
  cmd->add_option("commands", a.words, "CMD ARGS ::: CMD ARGS ..., after --")->required();
  cmd->positionals_at_end();
  cmd->callback([] { exit_code() = run_compare(a); });
}

}  // namespace powershape::cli
