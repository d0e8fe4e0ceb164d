#include <cstdio>
#include <string>

#include "backend_spec.hpp"
#include "powershape/experiment/chunk_runs.hpp"
#include "powershape/report/html_report.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_lock.hpp"
#include "powershape/util/progress.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct ReproArgs {
  experiment::ReproRequest q;
  double min_effect_pct = 0.2;
  CLI::Option* min_effect = nullptr;  // whether the user chose it
  std::string out, report;
};

int run_repro(ReproArgs& a) {
  if (!(a.min_effect_pct >= 0 && a.min_effect_pct < 100))
    throw invalid_input("--min-effect: expected a percentage in [0, 100), found " +
                        std::to_string(a.min_effect_pct));
  a.q.design.min_effect = a.min_effect_pct / 100;
  a.q.min_effect_chosen = a.min_effect->count() > 0;
  a.q.min_effect_hint = "--min-effect to choose";
  // Outputs are checked before minutes of measuring, not after.
  const auto claimed = util::claim_outputs({{a.out, "-o"}, {a.report, "--report"}});
  a.q.say = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  a.q.design.on_round = util::round_progress(true);
  const experiment::ReproRun r = experiment::repro(a.q);
  experiment::print_repro(stdout, r);
  if (!a.out.empty()) util::write_json_file(a.out, experiment::to_json(r.result));
  if (!a.report.empty()) {
    report::ReportInputs in;
    in.title = "powershape repro: " + r.workload;
    in.repro = experiment::to_json(r.result);
    report::write_report(a.report, in);
  }
  return 0;
}

}  // namespace

void add_repro(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "repro",
      "Is chunking worth it here? Compare chunk counts of matmul-softmax-matmul, the LM head, "
      "attention or MoE routing");
  static ReproArgs a;
  a.q.workload.workload = "msm";
  a.q.workload.chunks = "1,2,4,8,16,32";
  add_workload_options(*cmd, a.q.workload, WorkloadUse::kCompare);
  add_device_option(cmd, a.q.device);
  cmd->add_option("--rounds", a.q.design.rounds, "Rounds (default 8)")->check(CLI::Range(2, 1000));
  cmd->add_option("--window", a.q.design.window_s, "Seconds per measurement (default 2)")
      ->check(finite_in(0.01, 3600));
  cmd->add_option("--cooldown", a.q.design.cooldown_c,
                  "Idle before each measurement until this cool (C)")
      ->check(finite_in(0, 120));
  cmd->add_option("--seed", a.q.design.seed, "Seed of the run order (default 1)")
      ->check(seed_value());
  a.min_effect = cmd->add_option("--min-effect", a.min_effect_pct,
                                 "A difference under this many percent is called 'within' it, not "
                                 "faster or slower (default "
                                 "0.2; on a simulated device, what its profile's chunk ratios are "
                                 "known to be worth, if "
                                 "more)");
  output(cmd->add_option("-o,--output", a.out, "Write every measurement and the device as JSON"));
  output(cmd->add_option("--report", a.report,
                         "Also write the result as a self-contained HTML page (see report)"));
  cmd->callback([] { exit_code() = run_repro(a); });
}

}  // namespace powershape::cli
