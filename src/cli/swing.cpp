// `powershape swing`: a job's power swings in the grid's terms, checked against a grid spec.
#include "powershape/analysis/swing.hpp"

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "powershape/analysis/fold.hpp"
#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/swing_print.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_lock.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct SwingArgs {
  std::vector<std::string> recordings;
  std::string spec = analysis::kDefaultGridSpec, json, region;
  int64_t gpus = 0;
  double resolution_s = 0, ramp_window_s = 0, range_window_s = 0, segment_s = 20, rated_w = 0;
  double fold_ms = 0;
};

int run_swing(const SwingArgs& a) {
  std::vector<std::string> inputs = a.recordings;
  inputs.push_back(a.spec);
  const auto claimed = util::claim_outputs({{a.json, "--json"}}, inputs);
  if (a.fold_ms > 0 && a.region.empty())
    throw invalid_input("--fold: folds over the regions --region names (e.g. --region step)");
  const analysis::GridSpec spec = analysis::load_grid_spec(a.spec);
  const analysis::PowerInput in =
      analysis::read_power_inputs(a.recordings, a.resolution_s, a.region);
  analysis::SwingOptions o;
  o.ramp_window_s = a.ramp_window_s > 0 ? a.ramp_window_s : spec.ramp_window_s;
  o.range_window_s = a.range_window_s > 0 ? a.range_window_s : spec.range_window_s;
  o.segment_s = a.segment_s;
  o.rated_w = a.rated_w > 0 ? a.rated_w : in.rated_w;
  int64_t fleet = in.gpus;
  if (a.gpus > 0) {
    if (in.gpus == 0)
      throw invalid_input(
          "--gpus: a meter's CSV does not say how many GPUs it holds; it is analysed as it is");
    o.scale = static_cast<double>(a.gpus) / in.gpus;
    fleet = a.gpus;
  }
  const analysis::Swing s = analysis::analyse_swing(in.power, spec, o);
  std::optional<analysis::Fold> fold;  // before anything is printed: a bad fold prints nothing
  if (a.fold_ms > 0) fold = analysis::fold_power(in.power, in.regions_s, a.fold_ms * 1e-3, o.scale);
  analysis::print_swing_inputs(stdout, in, s, a.recordings.size(), fleet);
  analysis::print_swing(s, spec);
  if (!(o.rated_w > 0))
    std::printf(
        "(the recordings give no rated power: --rated W checks the limits stated as its "
        "share)\n");
  if (fold) analysis::print_fold(*fold, a.region, s.dt_s);
  if (!a.json.empty()) {
    auto j = analysis::to_json(s);
    if (fold) j["fold"] = analysis::to_json(*fold, a.region);
    j["inputs"] = a.recordings;
    j["gpus"] = fleet;
    j["signal"] = in.signal;
    j["spec"] = {{"name", spec.name}, {"source", spec.source}};
    util::write_json_file(a.json, j);
  }
  return 0;
}

}  // namespace

void add_swing(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "swing",
      "A job's power swings in the grid's terms (ramp rates, dynamic range, period, spectrum by "
      "band), checked against a grid spec; several recordings are nodes added on time");
  static SwingArgs a;
  cmd->add_option("recordings", a.recordings,
                  "Traces (monitor's CSV, nvidia-smi logs), Prometheus range-query JSON of a power "
                  "metric, or t_s,power_w CSV")
      ->required()
      ->transform(recording_named);
  cmd->add_option(
      "--spec", a.spec,
      "A grid spec: a JSON file or a shipped name (default grid-example; docs/grid.md)");
  cmd->add_option("--gpus", a.gpus,
                  "Scale to a fleet of this many GPUs moving in step with the recording's")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  cmd->add_option("--resolution", a.resolution_s,
                  "Seconds between the analysed samples (default: the recordings' own)")
      ->check(finite_in(1e-4, 60));
  cmd->add_option("--ramp-window", a.ramp_window_s,
                  "Seconds a ramp is averaged over (default: the spec's)")
      ->check(finite_in(1e-4, 3600));
  cmd->add_option("--range-window", a.range_window_s,
                  "Seconds the dynamic range is taken in (default: the spec's)")
      ->check(finite_in(1e-4, 86400));
  cmd->add_option("--segment", a.segment_s,
                  "Seconds of Welch's segments (default 20: 0.05 Hz bins)")
      ->check(finite_in(0.01, 86400));
  cmd->add_option("--rated", a.rated_w,
                  "The recordings' rated power in W, where they do not give their GPUs' limits")
      ->check(finite_in(1, 1e11));
  cmd->add_option("--region", a.region,
                  "Only from the first to the last region of this name in each trace (e.g. step: "
                  "the job without its start-up)");
  cmd->add_option("--fold", a.fold_ms,
                  "With --region: the power through a region (a step), its samples placed by "
                  "their time since the region began, in bins of this many ms")
      ->check(finite_in(0.1, 60000));
  output(cmd->add_option("--json", a.json,
                         "Also write the figures, the spectrum and the verdicts as JSON"));
  cmd->callback([] { exit_code() = run_swing(a); });
}

}  // namespace powershape::cli
