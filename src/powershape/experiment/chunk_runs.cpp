#include "powershape/experiment/chunk_runs.hpp"

#include "powershape/experiment/open_backend.hpp"
#include "powershape/experiment/reference_figures.hpp"
#include "powershape/experiment/result_table.hpp"
#include "powershape/experiment/tune_table.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/args.hpp"
#include "powershape/workload/finetune.hpp"
#include "powershape/workload/workload.hpp"

namespace powershape::experiment {
namespace {

void said(const Say& say, const std::string& line) {
  if (say && !line.empty()) say(line);
}

}  // namespace

std::string WorkloadOnDevice::header(const std::string& who) const {
  if (!backend->simulated()) return who + " on " + backend->describe();
  return who + " on the " + backend->describe() +
         (no_gpu.empty() ? "" : ": no GPU here (" + no_gpu + ")");
}

WorkloadOnDevice open_workload(const std::string& device, uint64_t seed, workload::WorkloadArgs w) {
  WorkloadOnDevice d;
  d.finetune = workload::chunked_or_finetune(w);
  // The workload's options are checked before the device opens and anything is said.
  workload::chunk_counts(w);
  workload::describe(w, 1);
  if (d.finetune) workload::parse_finetune(w.workload, w.shape);
  d.backend = open_backend(device, seed, &d.no_gpu);
  refuse_finetune_on_gpu(w.workload, *d.backend);
  d.plans = sim::workload_plans(w, d.backend->peak_rates());
  d.backend->set_configs(d.plans);
  return d;
}

ReproRun repro(ReproRequest q) {
  if (!(q.design.min_effect >= 0 && q.design.min_effect < 1))
    throw invalid_input("min-effect",
                        "expected a share in [0, 1), found " + std::to_string(q.design.min_effect));
  WorkloadOnDevice d = open_workload(q.device, q.design.seed, q.workload);
  said(q.say, d.header("powershape repro"));
  // A simulated device whose chunk ratios are known to be off the GPU's by more than the bound
  // gives no verdict inside that distance, unless the bound was chosen.
  if (const double e = d.backend->ratio_error(); e > q.design.min_effect && !q.min_effect_chosen) {
    q.design.min_effect = e;
    char line[240];
    std::snprintf(line, sizeof line,
                  "the simulator's chunk ratios were within %g points of the GPU's for 9 in 10 of "
                  "those it was calibrated against: a difference under %g%% is called within it",
                  e * 100, e * 100);
    said(q.say, line + (q.min_effect_hint.empty() ? "" : " (" + q.min_effect_hint + ")"));
  }
  said(q.say, heat_warmup(*d.backend, q.design.window_s, q.design));
  char line[200];
  std::snprintf(line, sizeof line,
                "workload %s, %zu configurations x %d rounds of %.1f s, interleaved and shuffled",
                d.plans.front().name.c_str(), d.plans.size(), q.design.rounds, q.design.window_s);
  said(q.say, line);
  ReproRun r;
  r.result = run_design(*d.backend, q.design);
  r.workload = d.plans.front().name;
  if (d.backend->simulated()) {
    const DeviceSpec spec = parse_device(q.device);
    r.reference_profile = spec.kind == DeviceSpec::Kind::kSim ? spec.profile : "h200";
    r.kind_name = workload::kind_name_of(workload::describe(q.workload, 1));
    r.kind = q.workload.workload;
  }
  return r;
}

void print_repro(std::FILE* out, const ReproRun& r) {
  print_result(out, r.result);
  if (!r.reference_profile.empty())
    print_reference_figures(out, r.reference_profile, r.kind_name, r.kind, r.result);
}

TuneRun tune_workload(TuneRequest q) {
  WorkloadOnDevice d = open_workload(q.device, q.options.seed, q.workload);
  if (d.plans.size() < 2) throw invalid_input("chunks", "give two chunk counts or more");
  TuneRun r;
  r.finetune = d.finetune;
  r.cache = q.cache;
  r.device = d.backend->device_json();
  TuneOptions& o = q.options;
  // Zeus' cost weighs time by the device's power limit.
  o.objective = parse_objective(q.objective, device_power_limit_w(r.device));
  o.max_slowdown = q.max_slowdown;
  o.min_effect = q.min_effect;
  said(q.say, d.header("powershape tune"));
  std::string model = q.no_model ? "" : q.model;
  if (!q.no_model && model.empty() && r.device.contains("profile"))
    model = r.device.at("profile").value("name", "");
  if (!model.empty()) said(q.say, use_model(o, sim::load_profile(model), d.plans));
  said(q.say, heat_warmup(*d.backend, o.window_s, o.warmup));
  char line[160];
  std::snprintf(line, sizeof line, "objective: %s; rounds of %.1f s windows, at most %d",
                o.objective.describe().c_str(), o.window_s, o.max_rounds);
  said(q.say, line);
  r.result = tune(*d.backend, o);
  if (q.cache && !d.finetune) r.cached = cache_choice(r.device, d.plans, r.result, q.objective);
  return r;
}

void print_tune_run(std::FILE* out, const TuneRun& r) {
  print_tune_result(out, r.result);
  if (!r.cache) return;
  if (r.finetune) {
    std::fprintf(out,
                 "not cached: the cache holds the op's chunk counts by its shape, and a simulated "
                 "training step's choice is not a measurement of it\n");
  } else {
    std::fprintf(out, "cached: %d chunks for '%s' in %s\n", r.cached->chunks, r.cached->key.c_str(),
                 tune_cache_path().c_str());
  }
}

nlohmann::json to_json(const TuneRun& r) {
  nlohmann::json j = to_json(r.result);
  j["device"] = r.device;
  return j;
}

}  // namespace powershape::experiment
