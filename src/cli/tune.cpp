#include "powershape/experiment/tune.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "backend_spec.hpp"
#include "powershape/experiment/chunk_runs.hpp"
#include "powershape/experiment/command_backend.hpp"
#include "powershape/experiment/tune_cache.hpp"
#include "powershape/experiment/tune_table.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/progress.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct TuneArgs {
  std::vector<std::string> words, scan;  // tune -L chunks 1,2,4 -- CMD {chunks}
  std::string source = "nvml", out;
  experiment::TuneRequest q;
  double max_slowdown_pct = -1, min_effect_pct = 0.2;
  bool no_cache = false;
};

void say(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// tune -L NAME V1,V2 -- CMD: the user's program, one run a measurement, raced without a model.
int run_tune_commands(TuneArgs& a) {
  if (a.scan.empty()) throw invalid_input("tune -- CMD: give -L NAME V1,V2,... to scan");
  experiment::CommandBackend backend(experiment::commands_from(a.words, a.scan), a.source);
  experiment::TuneOptions& o = a.q.options;
  o.objective = experiment::parse_objective(
      a.q.objective, experiment::device_power_limit_w(backend.device_json()));
  o.max_slowdown = a.q.max_slowdown;
  o.min_effect = a.q.min_effect;
  o.warmup.warmup_window_s = 0.01;  // a run lasts what the command takes
  say("powershape tune on " + backend.describe() + ": " + std::to_string(backend.config_count()) +
      " values of " + a.scan[0] + ", objective " + o.objective.describe());
  const experiment::TuneResult r = experiment::tune(backend, o);
  experiment::print_tune_result(stdout, r);
  if (!a.out.empty()) util::write_json_file(a.out, experiment::to_json(r));
  return 0;
}

int run_tune(TuneArgs& a) {
  a.q.max_slowdown = a.max_slowdown_pct > 0 ? a.max_slowdown_pct / 100 : -1;
  a.q.min_effect = a.min_effect_pct / 100;
  a.q.cache = !a.no_cache;
  a.q.options.warmup.on_round = util::round_progress(true);
  if (!a.words.empty()) return run_tune_commands(a);
  a.q.say = say;
  const experiment::TuneRun r = experiment::tune_workload(a.q);
  if (r.cached && !r.cached->aside.empty())
    std::fprintf(
        stderr, "powershape: the tune cache was not readable JSON; kept as %s, a new one started\n",
        r.cached->aside.c_str());
  experiment::print_tune_run(stdout, r);
  if (!a.out.empty()) util::write_json_file(a.out, experiment::to_json(r));
  return 0;
}

}  // namespace

void add_tune(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tune", "Choose the chunk count that minimises time, energy or cost, with few measurements");
  static TuneArgs a;
  a.q.workload.chunks = "1,2,4,8,16,32,64";
  add_workload_options(*cmd, a.q.workload, WorkloadUse::kCompare);
  add_device_option(cmd, a.q.device);
  cmd->add_option("--objective", a.q.objective, "time (default), energy, edp or cost:ETA (Zeus)");
  cmd->add_option("--max-slowdown", a.max_slowdown_pct,
                  "Percent slower than the baseline a choice may be (default: any)")
      ->check(finite_in(0.01, 100));
  cmd->add_option("--window", a.q.options.window_s, "Seconds per measurement (default 2)")
      ->check(finite_in(0.01, 3600));
  cmd->add_option("--rounds", a.q.options.max_rounds, "The budget in rounds (default 8)")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--keep", a.q.options.keep, "Candidates the model keeps (default 2)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--model", a.q.model,
                  "Profile the model simulates (default: a simulated device's own; none on a GPU)");
  cmd->add_flag("--no-model", a.q.no_model, "Race every candidate");
  cmd->add_option("--min-effect", a.min_effect_pct,
                  "Percent under which candidates are equivalent (default 0.2)")
      ->check(finite_in(0, 50));
  cmd->add_option("--seed", a.q.options.seed, "Seed of the run order (default 1)")
      ->check(seed_value());
  cmd->add_flag("--no-cache", a.no_cache, "Do not store the choice in the cache");
  output(cmd->add_option("-o,--output", a.out, "Write every measurement and the choice as JSON"));
  cmd->add_option("-L,--parameter-list", a.scan,
                  "NAME V1,V2,...: tune your command (after --) over the values of {NAME}")
      ->expected(2);
  cmd->add_option("--source", a.source, "With a command: nvml (default), fake:TRACE.csv or hwmon");
  cmd->add_option("command", a.words, "Your command, after --, with {NAME} where -L's value goes");
  cmd->positionals_at_end();
  cmd->callback([] { exit_code() = run_tune(a); });
}

}  // namespace powershape::cli
