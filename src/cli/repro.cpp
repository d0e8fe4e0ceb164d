#include <cstdio>
#include <string>
#include <vector>

#include "backend_spec.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/experiment/open_backend.hpp"
#include "powershape/experiment/reference_figures.hpp"
#include "powershape/experiment/result_table.hpp"
#include "powershape/report/html_report.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_lock.hpp"
#include "powershape/util/progress.hpp"
#include "powershape/workload/finetune.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct ReproArgs {
  workload::WorkloadArgs workload;
  std::string device;
  experiment::Design design;
  double min_effect_pct = 0.2;
  CLI::Option* min_effect = nullptr;  // whether the user chose it
  std::string out, report;
};

int run_repro(ReproArgs& a) {
  const bool finetune = workload::chunked_or_finetune(a.workload);
  if (!(a.min_effect_pct >= 0 && a.min_effect_pct < 100)) {
    throw invalid_input("--min-effect: expected a percentage in [0, 100), found " +
                        std::to_string(a.min_effect_pct));
  }
  a.design.min_effect = a.min_effect_pct / 100;
  // The workload's options are checked before the device opens and its header prints.
  workload::chunk_counts(a.workload);
  workload::describe(a.workload, 1);
  if (finetune) workload::parse_finetune(a.workload.workload, a.workload.shape);
  // Outputs are checked before minutes of measuring, not after.
  const auto claimed = util::claim_outputs({{a.out, "-o"}, {a.report, "--report"}});
  std::string why;
  auto backend = open_backend(a.device, a.design.seed, &why);
  experiment::refuse_finetune_on_gpu(a.workload.workload, *backend);
  if (backend->simulated()) {
    std::printf("powershape repro on the %s%s\n", backend->describe().c_str(),
                why.empty() ? "" : (": no GPU here (" + why + ")").c_str());
  } else {
    std::printf("powershape repro on %s\n", backend->describe().c_str());
  }
  // A simulated device whose chunk ratios are known to be off the GPU's by more than the
  // default's 0.2% gives no verdict inside that distance, unless the user chose one.
  if (const double e = backend->ratio_error();
      e > a.design.min_effect && a.min_effect->count() == 0) {
    a.design.min_effect = e;
    std::printf(
        "the simulator's chunk ratios were within %g points of the GPU's for 9 in 10 of those "
        "it was calibrated against: a difference under %g%% is called within it "
        "(--min-effect to choose)\n",
        e * 100, e * 100);
  }
  if (const std::string note = experiment::heat_warmup(*backend, a.design.window_s, a.design);
      !note.empty())
    std::printf("%s\n", note.c_str());
  const auto configs = sim::workload_plans(a.workload, backend->peak_rates());
  backend->set_configs(configs);
  std::printf("workload %s, %zu configurations x %d rounds of %.1f s, interleaved and shuffled\n",
              configs.front().name.c_str(), configs.size(), a.design.rounds, a.design.window_s);
  std::fflush(stdout);
  a.design.on_round = util::round_progress(true);
  experiment::Result r = experiment::run_design(*backend, a.design);
  experiment::print_result(stdout, r);
  if (backend->simulated()) {
    const auto d = experiment::parse_device(a.device);
    experiment::print_reference_figures(
        stdout, d.kind == experiment::DeviceSpec::Kind::kSim ? d.profile : "h200",
        workload::kind_name_of(workload::describe(a.workload, 1)), a.workload.workload, r);
  }
  if (!a.out.empty()) util::write_json_file(a.out, experiment::to_json(r));
  if (!a.report.empty()) {
    report::ReportInputs in;
    in.title = "powershape repro: " + configs.front().name;
    in.repro = experiment::to_json(r);
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
  add_workload_options(*cmd, a.workload, WorkloadUse::kRepro);
  add_device_option(cmd, a.device);
  cmd->add_option("--rounds", a.design.rounds, "Rounds (default 8)")->check(CLI::Range(2, 1000));
  cmd->add_option("--window", a.design.window_s, "Seconds per measurement (default 2)")
      ->check(finite_in(0.01, 3600));
  cmd->add_option("--cooldown", a.design.cooldown_c,
                  "Idle before each measurement until this cool (C)")
      ->check(finite_in(0, 120));
  cmd->add_option("--seed", a.design.seed, "Seed of the run order (default 1)")
      ->check(seed_value());
  a.min_effect = cmd->add_option(
      "--min-effect", a.min_effect_pct,
      "A difference under this many percent is called 'within' it, not faster or slower (default "
      "0.2; on a simulated device, what its profile's chunk ratios are known to be worth, if "
      "more)");
  output(cmd->add_option("-o,--output", a.out, "Write every measurement and the device as JSON"));
  output(cmd->add_option("--report", a.report,
                         "Also write the result as a self-contained HTML page (see report)"));
  cmd->callback([] { exit_code() = run_repro(a); });
}

}  // namespace powershape::cli
