#include "powershape/advise/advise_run.hpp"

#include "powershape/advise/advice_table.hpp"
#include "powershape/advise/outcome_table.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/experiment/open_backend.hpp"
#include "powershape/experiment/reference_figures.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/args.hpp"
#include "powershape/workload/workload.hpp"

namespace powershape::advise {
namespace {

TraceAdviceOptions trace_options(const AdviseRequest& q, const experiment::Objective& objective) {
  TraceAdviceOptions o;
  o.gpu = q.gpu;
  o.profile = q.profile;
  o.window_s = q.window_s;
  if (!q.knobs.empty()) o.knobs = q.knobs;
  o.objective = objective;
  o.max_slowdown = q.max_slowdown;
  o.grid = q.grid;
  o.grid_gpus = q.grid_gpus;
  return o;
}

// The workload on the GPU as found, recorded; `source` then names what ran.
trace::Trace run_on_gpu(const AdviseRequest& q, std::string& source) {
  if (workload::chunk_counts(q.workload).size() != 1)
    throw invalid_input("chunks", "advise takes one chunk count");
  std::string why;
  auto backend = experiment::open_backend("gpu", 1, &why);
  workload::WorkloadArgs w = q.workload;
  backend->set_configs(sim::workload_plans(w, backend->peak_rates()));
  if (q.on_start) {
    char line[64];
    std::snprintf(line, sizeof line, " as found for %.0f s", q.gpu_seconds);
    q.on_start("running " + backend->config_name(0) + " on " + backend->describe() + line);
  }
  source = backend->describe() + " (" + backend->config_name(0) + ")";
  return experiment::record_as_found(*backend, q.gpu_seconds);
}

void on_simulator(const AdviseRequest& q, const experiment::Objective& objective, AdviseRun& r) {
  const experiment::DeviceSpec d = experiment::parse_device(q.device);
  if (d.kind != experiment::DeviceSpec::Kind::kSim)
    throw invalid_input("device", "expected gpu or sim:PROFILE, found '" + q.device + "'");
  sim::Profile p = sim::load_profile(d.profile);
  if (!q.power_mode.empty()) sim::apply_power_mode(p, q.power_mode);
  workload::WorkloadArgs w = q.workload;
  const auto plans = sim::workload_plans(w, {p.peak_flops_per_s(), p.peak_bytes_per_s()});
  if (plans.size() != 1) throw invalid_input("chunks", "advise takes one chunk count");
  r.simulated = on_simulator(p, plans.front(), q.knobs, objective, q.max_slowdown, q.points, q.sim);
  r.source = "sim:" + d.profile;
  r.workload = plans.front().name;
  if (workload::chunk_counts(w) == std::vector<int>{1})
    r.measured =
        experiment::measured_figure(d.profile, workload::kind_name_of(workload::describe(w, 1)),
                                    experiment::Question::kSetting);
  r.profile = std::move(p);
}

}  // namespace

const std::vector<Outcome>& AdviseRun::outcomes() const {
  return from_trace ? from_trace->outcomes : simulated->outcomes;
}
std::size_t AdviseRun::chosen() const {
  return from_trace ? from_trace->chosen : simulated->chosen;
}
const experiment::Objective& AdviseRun::objective() const {
  return from_trace ? from_trace->objective : simulated->objective;
}

AdviseRun advise(const AdviseRequest& q) {
  // Zeus' cost weighs time by the device's power limit, set per device.
  const experiment::Objective objective = experiment::parse_objective(q.objective, 1);
  AdviseRun r;
  r.gpu = q.gpu;
  r.max_slowdown = q.max_slowdown;
  if (q.trace.empty() && q.device != "gpu") {
    if (q.grid != nullptr)
      throw invalid_input("grid", "predicts a swing from recorded power: with a trace or the GPU");
    on_simulator(q, objective, r);
    return r;
  }
  r.source = q.trace;
  const trace::Trace t = q.trace.empty() ? run_on_gpu(q, r.source) : trace::read_csv(q.trace);
  r.from_trace = advise::from_trace(t, r.source, trace_options(q, objective));
  return r;
}

nlohmann::json to_json(const AdviseRun& r) {
  nlohmann::json j;
  if (r.simulated) {
    j["device"] = r.source;
    j["workload"] = r.workload;
  } else {
    j["source"] = r.source;
    if (!r.from_trace->grid.is_null()) j["grid"] = r.from_trace->grid;
  }
  j["objective"] = r.objective().describe();
  j["max_slowdown"] = r.max_slowdown;
  j["outcomes"] = nlohmann::json::array();
  for (const auto& x : r.outcomes()) j["outcomes"].push_back(to_json(x));
  j["recommended"] = to_json(r.outcomes()[r.chosen()]);
  return j;
}

void print_advise_run(std::FILE* out, const AdviseRun& r, bool every, const std::string& more,
                      const std::string& unvalidated) {
  const auto table = [&](const char* unit, double ms_scale) {
    if (const auto hidden = print_outcomes(out, r.outcomes(), r.chosen(), unit, ms_scale, every))
      std::fprintf(out, "(%zu more settings%s)\n", hidden,
                   more.empty() ? "" : (": " + more).c_str());
  };
  if (r.from_trace) {
    print_trace_advice(out, *r.from_trace, r.source, r.gpu, r.max_slowdown);
    table("s", 1e-3);
    std::fprintf(out,
                 "not validated: the GPU was not run at these settings (predicted from the clocks "
                 "it visited by itself)%s\n",
                 unvalidated.empty() ? "" : ("; " + unvalidated).c_str());
    return;
  }
  print_sim_advice(out, *r.simulated, r.workload, *r.profile, r.max_slowdown);
  if (!r.measured.empty())
    std::fprintf(out, "a simulated device's prediction; %s\n", r.measured.c_str());
  std::fprintf(out, "\n");
  table("ms/iter", 1);
}

}  // namespace powershape::advise
