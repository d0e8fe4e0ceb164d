// `powershape swing`: a job's power swings in the grid's terms, checked against a grid spec.
#include <cstdio>
#include <string>
#include <vector>

#include "powershape/analysis/swing_run.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_lock.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct SwingArgs {
  analysis::SwingRequest q;
  std::string json;
};

int run_swing(const SwingArgs& a) {
  std::vector<std::string> inputs = a.q.recordings;
  inputs.push_back(a.q.spec);
  const auto claimed = util::claim_outputs({{a.json, "--json"}}, inputs);
  const analysis::SwingRun r = analysis::swing_run(a.q);
  analysis::print_swing_run(stdout, r, "--rated W checks the limits stated as its share");
  if (!a.json.empty()) util::write_json_file(a.json, analysis::to_json(r));
  return 0;
}

}  // namespace

void add_swing(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "swing",
      "A job's power swings in the grid's terms (ramp rates, dynamic range, period, spectrum by "
      "band), checked against a grid spec; several recordings are nodes added on time");
  static SwingArgs a;
  cmd->add_option("recordings", a.q.recordings,
                  "Traces (monitor's CSV, nvidia-smi logs), Prometheus range-query JSON of a power "
                  "metric, or t_s,power_w CSV")
      ->required()
      ->transform(recording_named);
  cmd->add_option(
      "--spec", a.q.spec,
      "A grid spec: a JSON file or a shipped name (default grid-example; docs/grid.md)");
  cmd->add_option("--gpus", a.q.gpus,
                  "Scale to a fleet of this many GPUs moving in step with the recording's")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  cmd->add_option("--resolution", a.q.resolution_s,
                  "Seconds between the analysed samples (default: the recordings' own)")
      ->check(finite_in(1e-4, 60));
  cmd->add_option("--ramp-window", a.q.ramp_window_s,
                  "Seconds a ramp is averaged over (default: the spec's)")
      ->check(finite_in(1e-4, 3600));
  cmd->add_option("--range-window", a.q.range_window_s,
                  "Seconds the dynamic range is taken in (default: the spec's)")
      ->check(finite_in(1e-4, 86400));
  cmd->add_option("--segment", a.q.segment_s,
                  "Seconds of Welch's segments (default 20: 0.05 Hz bins)")
      ->check(finite_in(0.01, 86400));
  cmd->add_option("--rated", a.q.rated_w,
                  "The recordings' rated power in W, where they do not give their GPUs' limits")
      ->check(finite_in(1, 1e11));
  auto* region = cmd->add_option(
      "--region", a.q.region,
      "Only from the first to the last region of this name in each trace (e.g. step: "
      "the job without its start-up)");
  cmd->add_option("--fold", a.q.fold_ms,
                  "With --region: the power through a region (a step), its samples placed by "
                  "their time since the region began, in bins of this many ms")
      ->check(finite_in(0.1, 60000))
      ->needs(region);
  output(cmd->add_option("--json", a.json,
                         "Also write the figures, the spectrum and the verdicts as JSON"));
  cmd->callback([] { exit_code() = run_swing(a); });
}

}  // namespace powershape::cli
