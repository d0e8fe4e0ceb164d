#include "powershape/experiment/tune.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "backend_spec.hpp"
#include "powershape/experiment/command_backend.hpp"
#include "powershape/experiment/tune_cache.hpp"
#include "powershape/experiment/tune_table.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/progress.hpp"
#include "powershape/workload/finetune.hpp"
#include "powershape/workload/workload.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct TuneArgs {
  std::vector<std::string> words, scan;  // tune -L chunks 1,2,4 -- CMD {chunks}
  std::string source = "nvml";
  workload::WorkloadArgs workload;
  std::string device, objective = "time", model, out;
  double max_slowdown_pct = -1, min_effect_pct = 0.2;
  bool no_model = false, no_cache = false;
  experiment::TuneOptions options;
};

// The profile the model simulates: --model, or the simulated device's own; empty: no model. A
// real GPU gets none by default: the simulator does not yet predict the chunk effect on it (on the
// H200 its model dropped 8 chunks at 131072x896x151936, which a sweep finds 1.4% faster).
std::string model_profile(const TuneArgs& a, const experiment::Backend& b) {
  if (a.no_model) return "";
  if (!a.model.empty()) return a.model;
  const nlohmann::json d = b.device_json();
  return d.contains("profile") ? d.at("profile").value("name", "") : "";
}

// The objective on the device (Zeus' cost weighs time by its power limit) and the race's bounds.
void set_objective(TuneArgs& a, const nlohmann::json& device) {
  a.options.objective =
      experiment::parse_objective(a.objective, experiment::device_power_limit_w(device));
  a.options.max_slowdown = a.max_slowdown_pct > 0 ? a.max_slowdown_pct / 100 : -1;
  a.options.min_effect = a.min_effect_pct / 100;
}

// tune -L NAME V1,V2 -- CMD: the user's program, one run a measurement, raced without a model.
int run_tune_commands(TuneArgs& a) {
  if (a.scan.empty()) throw invalid_input("tune -- CMD: give -L NAME V1,V2,... to scan");
  experiment::CommandBackend backend(experiment::commands_from(a.words, a.scan), a.source);
  const nlohmann::json device = backend.device_json();
  set_objective(a, device);
  a.options.warmup.warmup_window_s = 0.01;  // a run lasts what the command takes
  std::printf("powershape tune on %s: %zu values of %s, objective %s\n", backend.describe().c_str(),
              backend.config_count(), a.scan[0].c_str(), a.options.objective.describe().c_str());
  std::fflush(stdout);
  a.options.warmup.on_round = util::round_progress(true);
  const experiment::TuneResult r = experiment::tune(backend, a.options);
  experiment::print_tune_result(stdout, r);
  if (!a.out.empty()) util::write_json_file(a.out, experiment::to_json(r));
  return 0;
}

int run_tune(TuneArgs& a) {
  if (!a.words.empty()) return run_tune_commands(a);
  const bool finetune = workload::chunked_or_finetune(a.workload);
  if (finetune) workload::parse_finetune(a.workload.workload, a.workload.shape);
  std::string why;
  auto backend = open_backend(a.device, a.options.seed, &why);
  experiment::refuse_finetune_on_gpu(a.workload.workload, *backend);
  const auto plans = sim::workload_plans(a.workload, backend->peak_rates());
  if (plans.size() < 2) throw invalid_input("--chunks: give two chunk counts or more");
  backend->set_configs(plans);
  const nlohmann::json device = backend->device_json();
  set_objective(a, device);
  std::printf("powershape tune on %s%s\n", backend->describe().c_str(),
              why.empty() ? "" : (": no GPU here (" + why + ")").c_str());
  const std::string profile = model_profile(a, *backend);
  if (!profile.empty()) {
    std::printf("%s\n",
                experiment::use_model(a.options, sim::load_profile(profile), plans).c_str());
  }
  if (const std::string note =
          experiment::heat_warmup(*backend, a.options.window_s, a.options.warmup);
      !note.empty())
    std::printf("%s\n", note.c_str());
  std::printf("objective: %s; rounds of %.1f s windows, at most %d\n",
              a.options.objective.describe().c_str(), a.options.window_s, a.options.max_rounds);
  std::fflush(stdout);
  a.options.warmup.on_round = util::round_progress(true);
  const experiment::TuneResult r = experiment::tune(*backend, a.options);

  experiment::print_tune_result(stdout, r);
  if (finetune && !a.no_cache) {
    std::printf(
        "not cached: the cache holds the op's chunk counts by its shape, and a simulated "
        "training step's choice is not a measurement of it\n");
  } else if (!a.no_cache) {
    const auto c = experiment::cache_choice(device, plans, r, a.objective);
    if (!c.aside.empty()) {
      std::fprintf(stderr,
                   "powershape: the tune cache was not readable JSON; kept as %s, a new one "
                   "started\n",
                   c.aside.c_str());
    }
    std::printf("cached: %d chunks for '%s' in %s\n", c.chunks, c.key.c_str(),
                experiment::tune_cache_path().c_str());
  }
  if (!a.out.empty()) {
    nlohmann::json j = experiment::to_json(r);
    j["device"] = device;
    util::write_json_file(a.out, j);
  }
  return 0;
}

}  // namespace

void add_tune(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "tune", "Choose the chunk count that minimises time, energy or cost, with few measurements");
  static TuneArgs a;
  a.workload.chunks = "1,2,4,8,16,32,64";
  cmd->add_option("--workload", a.workload.workload,
                  workload::kind_list(true) +
                      " (default lmhead), or on a simulated device "
                      "finetune:MODEL[:lora]");
  cmd->add_flag("--forward-only", a.workload.forward_only,
                "lmhead: the forward pass alone (inference), as sim and repro take it");
  add_exp_in_product_flag(*cmd, a.workload);
  cmd->add_option("--shape", a.workload.shape, workload::kind_shapes());
  cmd->add_option("--chunks", a.workload.chunks,
                  "Candidate chunk counts, the first the baseline (default 1,2,4,8,16,32,64)");
  cmd->add_option("--ce-bytes", a.workload.ce_bytes_per_logit,
                  "lmhead: bytes the cross-entropy pass moves per logit (default 4)")
      ->check(finite_in(0.5, 1024));
  add_device_option(cmd, a.device);
  cmd->add_option("--objective", a.objective, "time (default), energy, edp or cost:ETA (Zeus)");
  cmd->add_option("--max-slowdown", a.max_slowdown_pct,
                  "Percent slower than the baseline a choice may be (default: any)")
      ->check(finite_in(0.01, 100));
  cmd->add_option("--window", a.options.window_s, "Seconds per measurement (default 2)")
      ->check(finite_in(0.01, 3600));
  cmd->add_option("--rounds", a.options.max_rounds, "The budget in rounds (default 8)")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--keep", a.options.keep, "Candidates the model keeps (default 2)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--model", a.model,
                  "Profile the model simulates (default: a simulated device's own; none on a GPU)");
  cmd->add_flag("--no-model", a.no_model, "Race every candidate");
  cmd->add_option("--min-effect", a.min_effect_pct,
                  "Percent under which candidates are equivalent (default 0.2)")
      ->check(finite_in(0, 50));
  cmd->add_option("--seed", a.options.seed, "Seed of the run order (default 1)")
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
