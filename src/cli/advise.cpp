// powershape advise: the SM clock cap, power limit or power mode that minimises energy (or EDP,
// or Zeus' cost) within a slowdown bound, predicted on a simulated device or from a trace.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "advise_apply.hpp"
#include "backend_spec.hpp"
#include "powershape/advise/advice.hpp"
#include "powershape/advise/advice_table.hpp"
#include "powershape/advise/grid_check.hpp"
#include "powershape/advise/mfu_power.hpp"
#include "powershape/advise/outcome_table.hpp"
#include "powershape/advise/selector.hpp"
#include "powershape/advise/sim_advisor.hpp"
#include "powershape/advise/sweep.hpp"
#include "powershape/advise/trace_advisor.hpp"
#include "powershape/analysis/grid_spec.hpp"
#include "powershape/experiment/command_backend.hpp"
#include "powershape/experiment/open_backend.hpp"
#include "powershape/experiment/reference_figures.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/sim/simulator.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/open_source.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/printable.hpp"
#include "powershape/util/progress.hpp"
#include "powershape/util/signals.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct AdviseArgs {
  std::string trace, device = "sim:h200", profile, power_mode, knobs, objective = "energy", out,
                     mfu;
  workload::WorkloadArgs workload;
  int gpu = 0, points = 0, rounds = 2;  // points 0: 8 a knob simulated, 4 measured (--sweep)
  bool sweep = false, table = false;
  std::string source = "nvml";
  double max_slowdown_pct = -1, window_s = 1, peak_tflops = 0, gpu_seconds = 30, grid_gpus = 1;
  std::string grid;                             // a grid spec the choice must be within
  std::optional<analysis::GridSpec> grid_spec;  // read from it before anything else
  advise::SimAdviseOptions sim;
  ApplyArgs apply;
};

// The outcomes' table; where only the chosen and the GPU as found are shown, how to see the rest.
void print_table(const std::vector<advise::Outcome>& o, std::size_t chosen, const char* unit,
                 double ms_scale, bool every) {
  if (const auto hidden = advise::print_outcomes(o, chosen, unit, ms_scale, every); hidden > 0)
    std::printf("(%zu more settings: --table lists each)\n", hidden);
}

int run_mfu(const AdviseArgs& a) {
  const sim::Profile p = sim::load_profile(a.profile.empty() ? "h200" : a.profile);
  const double peak = a.peak_tflops > 0 ? a.peak_tflops * 1e12 : p.peak_flops_per_s();
  const auto points = advise::read_mfu_points(a.mfu, peak);
  const auto m = advise::fit_mfu(points);
  advise::print_mfu_fit(
      stdout, a.mfu, peak,
      a.peak_tflops > 0 ? "--peak-tflops" : p.name + "'s products at its maximum clock", points, m,
      p.power_limit_w);
  return 0;
}

// What advise predicted: every outcome (the baseline first), the choice, what the JSON says of
// the source.
struct Advice {
  std::vector<advise::Outcome> outcomes;
  std::size_t chosen = 0;
  nlohmann::json out;
};

// The workload on the GPU as found, recorded (then predicted from as a trace is).
trace::Trace run_on_gpu(AdviseArgs& a, std::string& label) {
  std::string why;
  auto backend = open_backend("gpu", 1, &why);
  backend->set_configs(sim::workload_plans(a.workload, backend->peak_rates()));
  if (backend->config_count() != 1) throw invalid_input("--chunks: advise takes one chunk count");
  std::printf("powershape advise: running %s on %s as found for %.0f s\n",
              backend->config_name(0).c_str(), backend->describe().c_str(), a.gpu_seconds);
  std::fflush(stdout);
  label = backend->describe() + " (" + backend->config_name(0) + ")";
  return experiment::record_as_found(*backend, a.gpu_seconds);
}

std::vector<advise::Knob> knobs_of(const AdviseArgs& a) {
  return a.knobs.empty() ? std::vector<advise::Knob>{} : advise::parse_knobs(a.knobs);
}

// From a trace: its classes, the model fitted to them, each setting predicted.
Advice from_trace(const AdviseArgs& a, const trace::Trace& t, const std::string& label,
                  experiment::Objective& objective, double max_slowdown) {
  advise::TraceAdviceOptions o;
  o.gpu = a.gpu;
  o.profile = a.profile;
  o.window_s = a.window_s;
  if (!a.knobs.empty()) o.knobs = advise::parse_knobs(a.knobs);
  o.objective = objective;
  o.max_slowdown = max_slowdown;
  if (a.grid_spec) o.grid = &*a.grid_spec;
  o.grid_gpus = a.grid_gpus;
  advise::TraceAdvice r = advise::from_trace(t, label, o);
  objective = r.objective;
  advise::print_trace_advice(stdout, r, label, a.gpu, max_slowdown);
  print_table(r.outcomes, r.chosen, "s", 1e-3, a.table);
  std::printf(
      "not validated: the GPU was not run at these settings (predicted from the clocks it "
      "visited by itself); `powershape advise --apply` sets the choice, and a monitor around "
      "your job then measures it\n");
  Advice out{r.outcomes, r.chosen, {}};
  out.out["source"] = label;
  if (!r.grid.is_null()) out.out["grid"] = r.grid;
  return out;
}

// On a simulated device: each setting simulated, found by the search.
Advice on_simulator(AdviseArgs& a, experiment::Objective& objective, double max_slowdown) {
  const experiment::DeviceSpec d = experiment::parse_device(a.device);
  if (d.kind != experiment::DeviceSpec::Kind::kSim)
    throw invalid_input("--device: expected gpu or sim:PROFILE, found '" + a.device + "'");
  const std::string& pname = d.profile;
  sim::Profile p = sim::load_profile(pname);
  if (!a.power_mode.empty()) sim::apply_power_mode(p, a.power_mode);
  auto plans = sim::workload_plans(a.workload, {p.peak_flops_per_s(), p.peak_bytes_per_s()});
  if (plans.size() != 1) throw invalid_input("--chunks: advise takes one chunk count");
  const advise::SimAdvice r = advise::on_simulator(
      p, plans.front(), knobs_of(a), objective, max_slowdown, a.points > 0 ? a.points : 8, a.sim);
  objective = r.objective;
  advise::print_sim_advice(stdout, r, plans.front().name, p, max_slowdown);
  if (const std::string measured = experiment::measured_figure(
          pname, workload::kind_name_of(workload::describe(a.workload, 1)),
          experiment::Question::kSetting);
      !measured.empty() && workload::chunk_counts(a.workload) == std::vector<int>{1})
    std::printf("a simulated device's prediction; %s\n", measured.c_str());
  std::printf("\n");
  print_table(r.outcomes, r.chosen, "ms/iter", 1, a.table);
  Advice out{r.outcomes, r.chosen, {}};
  out.out["device"] = "sim:" + pname;
  out.out["workload"] = plans.front().name;
  return out;
}

// advise --sweep -- CMD: each candidate setting measured under the command (advise/sweep.hpp).
int run_sweep(const AdviseArgs& a) {
  if (a.apply.command.empty()) throw invalid_input("--sweep: give the command to measure after --");
  advise::SweepRequest q;
  q.knobs = advise::parse_knobs(a.knobs.empty() ? "clock,power" : a.knobs);
  q.objective = experiment::parse_objective(a.objective, 1);
  q.command = a.apply.command;
  q.source = a.source;
  q.gpu = a.gpu;
  q.points = a.points > 0 ? a.points : 4;
  q.rounds = a.rounds;
  restore_first("/sys");  // what a run that did not finish left set, first
  q.max_slowdown = a.max_slowdown_pct / 100;
  q.on_start = [](const std::string& what) {
    std::printf("powershape advise --sweep: %s\n", what.c_str());
    std::fflush(stdout);
  };
  q.on_round = util::round_progress(true);
  q.interrupted = [] { return util::received_signal() != 0; };
  util::forward_signals_to(0);  // a signal ends the sweep between runs; the setting is put back
  experiment::Objective objective;
  const advise::Sweep r = advise::sweep_command(q, &objective);
  if (r.experiment.interrupted) {
    std::printf("powershape: stopped by signal %d; every setting was put back\n",
                util::received_signal());
    return 128 + util::received_signal();
  }
  advise::print_outcomes(r.outcomes, r.chosen, "ms/run", 1);
  std::printf("\nmeasured recommendation: %s (every setting put back)\n",
              r.outcomes[r.chosen].setting.describe().c_str());
  if (!a.out.empty()) util::write_json_file(a.out, advise::to_json(r, objective));
  return 0;
}

// The bound a recommendation keeps unless --max-slowdown says otherwise: energy bought with any
// slowdown (a clock cap at +44% time) is seldom what a job wants.
constexpr double kDefaultMaxSlowdownPct = 10;

int run_advise(AdviseArgs& a) {
  a.apply.gpu = a.gpu;
  if (a.max_slowdown_pct < 0) a.max_slowdown_pct = kDefaultMaxSlowdownPct;
  if (a.apply.restore) return restore_left(a.apply);
  if (a.apply.force) throw invalid_input("--force: only with --restore");
  if (a.sweep) return run_sweep(a);
  if (!a.apply.command.empty() && !a.apply.apply)
    throw invalid_input("a command after -- runs only with --apply or --sweep");
  if (!a.mfu.empty()) return run_mfu(a);
  // A spec that cannot be read is said before the trace is read and fitted.
  if (!a.grid.empty()) a.grid_spec = analysis::load_grid_spec(a.grid);
  // Zeus' cost weighs time by the device's power limit, set per device.
  experiment::Objective objective = experiment::parse_objective(a.objective, 1);
  const double max_slowdown = a.max_slowdown_pct >= 0 ? a.max_slowdown_pct / 100 : -1;
  Advice r;
  if (!a.trace.empty()) {
    r = from_trace(a, trace::read_csv(a.trace), a.trace, objective, max_slowdown);
  } else if (a.device == "gpu") {
    std::string label;
    const trace::Trace t = run_on_gpu(a, label);
    r = from_trace(a, t, label, objective, max_slowdown);
  } else {
    if (!a.grid.empty())
      throw CLI::ValidationError(
          "--grid", "predicts a swing from recorded power: with --trace or --device gpu");
    r = on_simulator(a, objective, max_slowdown);
  }
  r.out["objective"] = objective.describe();
  r.out["max_slowdown"] = max_slowdown;
  r.out["outcomes"] = nlohmann::json::array();
  for (const auto& x : r.outcomes) r.out["outcomes"].push_back(to_json(x));
  r.out["recommended"] = to_json(r.outcomes[r.chosen]);
  if (!a.out.empty()) util::write_json_file(a.out, r.out);
  if (a.apply.apply) return apply_setting(a.apply, r.outcomes[r.chosen].setting);
  return 0;
}

}  // namespace

void add_advise(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "advise",
      "Recommend the SM clock cap, power limit or power mode that minimises energy within a "
      "slowdown bound");
  static AdviseArgs a;
  a.workload.workload = "lmhead";
  cmd->add_option("--trace", a.trace,
                  "Predict from a recorded trace (monitor -o T.csv): no setting is changed")
      ->transform(recording_named);
  cmd->add_option("--gpu", a.gpu, "The trace's GPU (default 0)")->check(CLI::Range(0, 1023));
  cmd->add_option("--grid", a.grid,
                  "A grid spec (a file, or grid-example) the recommendation must be predicted "
                  "within (with --trace or --device gpu)");
  cmd->add_option("--grid-gpus", a.grid_gpus,
                  "With --grid: the GPUs in step the trace's GPUs stand for (default 1)")
      ->check(finite_in(1, 1e8));
  cmd->add_option("--window", a.window_s, "Seconds per classified window of a trace (default 1)")
      ->check(finite_in(0.01, 3600));
  cmd->add_option("--profile", a.profile,
                  "The profile whose V/f curve a trace's GPU follows (default: matched by name)");
  add_workload_options(*cmd, a.workload, WorkloadUse::kSim);
  cmd->add_option(
      "--device", a.device,
      "With --workload: sim:PROFILE (default sim:h200) simulates each setting; gpu runs "
      "the workload as found and predicts from its trace");
  cmd->add_option("--gpu-seconds", a.gpu_seconds,
                  "With --device gpu: seconds the workload runs as found (default 30)")
      ->check(finite_in(2, 3600));
  cmd->add_option("--power-mode", a.power_mode, "The profile's power mode the device is in");
  cmd->add_option("--knobs", a.knobs,
                  "What may change: clock, power, mode (default clock,power; and mode where the "
                  "device has modes)");
  cmd->add_option("--objective", a.objective, "energy (default), time, edp or cost:ETA (Zeus)");
  cmd->add_option("--max-slowdown", a.max_slowdown_pct,
                  "Percent slower than as found a recommendation may be (default 10; 100: "
                  "twice as slow)")
      ->check(finite_in(0, 100));
  cmd->add_option("--points", a.points, "Coarse values a knob (default 8; 4 with --sweep)")
      ->check(CLI::Range(2, 200));
  cmd->add_option("--seconds", a.sim.seconds, "Simulated seconds a setting and seed (default 3)")
      ->check(finite_in(0.1, 600));
  cmd->add_option("--seeds", a.sim.seeds, "Seeds a setting (default 3)")->check(CLI::Range(2, 20));
  cmd->add_option("--mfu", a.mfu,
                  "Fit the MFU power model to a probe --record folder (or data/h200) and report "
                  "where it holds");
  cmd->add_option("--peak-tflops", a.peak_tflops,
                  "With --mfu: the peak MFU is against (default: the profile's products at its "
                  "maximum clock; an H200's data sheet says 989 dense bf16)")
      ->check(finite_in(0.001, 100000));
  output(
      cmd->add_option("-o,--output", a.out, "Write every outcome and the recommendation as JSON"));
  cmd->add_flag("--table", a.table,
                "List every setting tried (default: the recommendation and the GPU as found)");
  add_apply_options(cmd, a.apply);
  cmd->add_flag("--sweep", a.sweep,
                "Measure the command after -- under each candidate setting, applied in turn and "
                "put back (root; never on a shared GPU)");
  cmd->add_option("--rounds", a.rounds, "With --sweep: rounds over the settings (default 2)")
      ->check(CLI::Range(2, 100));
  cmd->add_option("--source", a.source,
                  "With --sweep: the command's telemetry, nvml (default) or fake:TRACE.csv");
  cmd->callback([] { exit_code() = run_advise(a); });
}

}  // namespace powershape::cli
