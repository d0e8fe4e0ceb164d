#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "error_message.hpp"
#include "powershape/analysis/summary.hpp"
#include "powershape/analysis/summary_table.hpp"
#include "powershape/experiment/open_backend.hpp"
#include "powershape/report/run_outputs.hpp"
#include "powershape/sim/mechanism_fit.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/sim/simulator.hpp"
#include "powershape/sim/tables.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/csv_writer.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/progress.hpp"
#include "powershape/util/share_dir.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct SimArgs {
  std::string profile = "h200";
  std::string power_mode;
  workload::WorkloadArgs workload;
  sim::SimOptions run = [] {
    sim::SimOptions o;
    o.seconds = 10;
    return o;
  }();
  double step_ms = 0.1;
  std::string out_csv, out_json, out_perfetto, out_report;
  bool every_row = false;
};

struct CalibrateArgs {
  std::string profile = "h200";
  std::string data;                // empty: the H200 recordings powershape ships
  std::vector<std::string> repro;  // more folders of repro -o results (other cards)
  std::string out;
  int max_evals = 400;
  std::string mechanisms;  // a recording (monitor's CSV) to fit the profile's mechanisms from
  int gpu = -1;            // its GPU; -1: the first it has
};

int run_sim(SimArgs& a) {
  const auto claimed = util::claim_outputs({{a.out_csv, "-o"},
                                            {a.out_json, "--json"},
                                            {a.out_perfetto, "--perfetto"},
                                            {a.out_report, "--report"}});
  sim::Profile p = sim::load_profile(a.profile);
  if (!a.power_mode.empty()) sim::apply_power_mode(p, a.power_mode);
  if (a.run.power_limit_w > p.power_limit_w && a.run.power_limit_w <= 2 * p.power_limit_w) {
    std::fprintf(stderr,
                 "powershape: warning: --power-limit %.0f W is above %s's own %.0f W limit (the "
                 "card would refuse it); simulated as asked\n",
                 a.run.power_limit_w, p.name.c_str(), p.power_limit_w);
  }
  auto plans = sim::workload_plans(a.workload, {p.peak_flops_per_s(), p.peak_bytes_per_s()});
  if (plans.size() != 1)
    throw invalid_input("--chunks: sim runs one chunk count (repro compares several)");
  const workload::Plan& plan = plans.front();
  sim::SimOptions& o = a.run;
  if (o.iterations > 0) o.seconds = 0;
  o.step_s = a.step_ms * 1e-3;
  sim::check_settings(p, o);  // refused before anything is printed
  sim::check_run(p, plan, o.iterations, o.seconds, o.step_s);
  std::printf("simulated device: %s (%s profile), workload %s\n", p.name.c_str(), p.status.c_str(),
              plan.name.c_str());
  sim::SimResult r = sim::simulate(p, plan, o);
  auto summaries = analysis::summarize(r.trace);
  analysis::print_summaries(stdout, "'" + plan.name + "'", r.trace, summaries, "--json");
  sim::print_run(stdout, plan, r);
  if (!a.out_csv.empty()) trace::write_csv(a.out_csv, r.trace, a.every_row);
  report::RunRecord run;
  run.title = "powershape sim: " + plan.name + " on " + p.name;
  run.summaries = &summaries;
  return report::write_outputs({a.out_json, a.out_perfetto, a.out_report}, r.trace, run, say_output)
             ? 0
             : 1;
}

// The mechanisms a recording shows (sim/mechanism_fit.hpp), one line each, into -o.
int run_mechanism_fit(const CalibrateArgs& a) {
  const trace::Trace t = trace::read_csv(a.mechanisms);
  const int gpu = a.gpu >= 0 ? a.gpu : t.samples.empty() ? 0 : t.samples.front().gpu;
  const auto f = sim::fit_mechanisms(sim::load_profile(a.profile), t, gpu);
  std::printf("mechanisms of %s fitted from %s (GPU %d, %zu rows):\n", a.profile.c_str(),
              a.mechanisms.c_str(), gpu, t.samples.size());
  for (const auto& l : f.lines) std::printf("  %s\n", l.c_str());
  if (!a.out.empty()) {
    util::write_json_file(a.out, sim::to_json(f.profile));
    std::printf("wrote %s\n", a.out.c_str());
  }
  return 0;
}

int run_calibrate(CalibrateArgs& a) {
  if (!a.mechanisms.empty()) return run_mechanism_fit(a);
  if (a.data.empty()) a.data = util::share_dir() + "/data/h200";
  sim::Profile start = sim::load_profile(a.profile);
  auto data = sim::read_calibration_data(a.data);
  for (const auto& dir : a.repro) sim::add_repro(data, dir);
  const auto line = util::progress_line("simulation", true);
  const int64_t t0 = telemetry::steady_now_ns();
  int last = 0, most = 0;
  auto c = sim::calibrate(start, data, a.max_evals, [&](int i, int m) {
    last = i;
    most = m;
    if (line) line(i, m, static_cast<double>(telemetry::steady_now_ns() - t0) * 1e-9);
  });
  if (line && last < most) std::fputc('\n', stderr);  // the fits converged before their most
  std::printf("calibrating %s against %s (%d simulations)\n\n", start.name.c_str(), a.data.c_str(),
              c.evaluations);
  sim::print_calibration(stdout, c, "probe --record");
  const auto& q = c.profile;
  if (!a.out.empty()) {
    util::write_json_file(a.out, sim::to_json(q));
    std::printf("wrote %s\n", a.out.c_str());
  }
  return 0;
}

}  // namespace

void add_sim(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "sim", "Run a workload on a simulated GPU (power, thermal and DVFS model) and summarise it");
  static SimArgs a;
  auto* profile = cmd->add_option(
      "--profile", a.profile, "Device profile: a name in profiles/ or a JSON file (default h200)");
  // --device as repro, tune and advise spell it, for the one kind of device sim has.
  cmd->add_option_function<std::string>(
         "--device",
         [](const std::string& spec) {
           experiment::DeviceSpec d;
           try {
             d = experiment::parse_device(spec);
           } catch (const std::exception&) {  // said below, as sim's own choice
           }
           if (d.kind != experiment::DeviceSpec::Kind::kSim)
             throw CLI::ValidationError(
                 "--device", "sim runs on a simulated GPU: sim or sim:PROFILE, not '" + spec + "'");
           a.profile = d.profile;
         },
         "sim or sim:PROFILE, as --profile PROFILE")
      ->excludes(profile);
  cmd->add_option("--power-mode", a.power_mode,
                  "A power mode of the profile (Jetson: 15W, 30W, 50W, MAXN)");
  add_workload_options(*cmd, a.workload, WorkloadUse::kSim);
  cmd->add_option("--seconds", a.run.seconds, "Run the workload for this long (default 10)")
      ->check(finite_in(1e-3, 86400));
  cmd->add_option("--iterations", a.run.iterations, "Run the workload this many times instead")
      ->check(CLI::Range(0, 100'000'000));
  cmd->add_option("--power-limit", a.run.power_limit_w, "Power limit in W (default the profile's)")
      ->check(finite_in(0, 100'000));
  cmd->add_option("--clock-cap", a.run.clock_cap_mhz, "Cap the SM clock at this many MHz")
      ->check(finite_in(0, 100'000));
  cmd->add_option("--step-ms", a.step_ms, "Simulation step in ms (default 0.1)")
      ->check(finite_in(1e-3, 10));
  cmd->add_option("--seed", a.run.seed, "Seed of the sensor noise (default 1)")
      ->check(seed_value());
  output(cmd->add_option("-o,--output", a.out_csv,
                         "Write the simulated trace as CSV (the monitor's format)"));
  cmd->add_flag("--every-row", a.every_row,
                "Keep every poll in the CSV, also those equal to the one before");
  output(cmd->add_option("--json", a.out_json, "Write metadata and the summary as JSON"));
  output(
      cmd->add_option("--perfetto", a.out_perfetto,
                      "Write the trace for Perfetto / chrome://tracing (simulated microseconds)"));
  output(cmd->add_option(
      "--report", a.out_report,
      "Also write the trace and summary as a self-contained HTML page (see report)"));

  auto* cal = cmd->add_subcommand(
      "calibrate", "Fit a profile's parameters to recorded telemetry and report the fit error");
  static CalibrateArgs c;
  cal->add_option("--profile", c.profile, "Profile to start from (default h200)");
  cal->add_option(
      "--data", c.data,
      "Folder of recorded telemetry laid out as data/h200 (default: the H200 recordings "
      "powershape ships)");
  cal->add_option("--repro", c.repro,
                  "A folder of repro -o results (repro_*.json) from another card of the same "
                  "kind, as more targets: the fit then meets the cards' mean (repeatable)");
  output(cal->add_option("-o,--output", c.out, "Write the fitted profile here"));
  auto* evals =
      cal->add_option("--max-evals", c.max_evals, "Most simulations per fit (default 400)")
          ->check(CLI::Range(1, 100'000));
  auto* mech = cal->add_option(
      "--mechanisms", c.mechanisms,
      "Fit the profile's thermal slowdown, clock recovery, fan and supply from this recording "
      "(monitor's CSV of the device heating and cooling) instead of its steady parameters");
  cal->add_option("--gpu", c.gpu, "The recording's GPU to fit (default: its first)")
      ->check(CLI::Range(0, 1023))
      ->needs(mech);
  for (auto* o : {cal->get_option("--data"), cal->get_option("--repro"), evals}) mech->excludes(o);
  cal->callback([] { exit_code() = run_calibrate(c); });
  auto* fleet = add_sim_fleet(*cmd);
  cmd->callback([cal, fleet] {
    if (!cal->parsed() && !fleet->parsed()) exit_code() = run_sim(a);
  });
}

}  // namespace powershape::cli
