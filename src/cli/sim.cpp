#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "error_message.hpp"
#include "powershape/experiment/open_backend.hpp"
#include "powershape/report/run_outputs.hpp"
#include "powershape/sim/calibrate.hpp"
#include "powershape/sim/mechanism_fit.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/sim/sim_run.hpp"
#include "powershape/sim/tables.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/csv_writer.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_lock.hpp"
#include "powershape/util/progress.hpp"
#include "powershape/util/share_dir.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct SimArgs {
  sim::SimRequest q;
  std::string out_csv;
  report::RunOutputs outputs;
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

int run_sim(const SimArgs& a) {
  const auto claimed = util::claim_outputs({{a.out_csv, "-o"},
                                            {a.outputs.json, "--json"},
                                            {a.outputs.perfetto, "--perfetto"},
                                            {a.outputs.report, "--report"}});
  const auto warn = [](const std::string& w) {
    std::fprintf(stderr, "powershape: warning: %s\n", w.c_str());
  };
  const auto start = [](const std::string& l) { std::printf("%s\n", l.c_str()); };
  const sim::SimRun r = sim::run_sim(a.q, {warn, start});
  sim::print_sim_run(stdout, r, "--json");
  if (!a.out_csv.empty()) trace::write_csv(a.out_csv, r.result.trace, a.every_row);
  report::RunRecord run;
  run.title = "powershape sim: " + r.plan.name + " on " + r.profile.name;
  run.summaries = &r.summaries;
  return report::write_outputs(a.outputs, r.result.trace, run, say_output) ? 0 : 1;
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
  int last = 0, most = 0;
  auto c = sim::calibrate(start, data, a.max_evals, [&](int i, int m) {
    last = i;
    most = m;
    if (line) line(i, m, 0);
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
  auto* profile =
      cmd->add_option("--profile", a.q.profile,
                      "Device profile: a name in profiles/ or a JSON file (default h200)");
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
           a.q.profile = d.profile;
         },
         "sim or sim:PROFILE, as --profile PROFILE")
      ->excludes(profile);
  cmd->add_option("--power-mode", a.q.power_mode,
                  "A power mode of the profile (Jetson: 15W, 30W, 50W, MAXN)");
  add_workload_options(*cmd, a.q.workload, WorkloadUse::kSim);
  cmd->add_option("--seconds", a.q.run.seconds, "Run the workload for this long (default 10)")
      ->check(finite_in(1e-3, 86400));
  cmd->add_option("--iterations", a.q.run.iterations, "Run the workload this many times instead")
      ->check(CLI::Range(0, 100'000'000));
  cmd->add_option("--power-limit", a.q.run.power_limit_w,
                  "Power limit in W (default the profile's)")
      ->check(finite_in(0, 100'000));
  cmd->add_option("--clock-cap", a.q.run.clock_cap_mhz, "Cap the SM clock at this many MHz")
      ->check(finite_in(0, 100'000));
  cmd->add_option("--step-ms", a.q.step_ms, "Simulation step in ms (default 0.1)")
      ->check(finite_in(1e-3, 10));
  cmd->add_option("--seed", a.q.run.seed, "Seed of the sensor noise (default 1)")
      ->check(seed_value());
  output(cmd->add_option("-o,--output", a.out_csv,
                         "Write the simulated trace as CSV (the monitor's format)"));
  cmd->add_flag("--every-row", a.every_row,
                "Keep every poll in the CSV, also those equal to the one before");
  output(cmd->add_option("--json", a.outputs.json, "Write metadata and the summary as JSON"));
  output(
      cmd->add_option("--perfetto", a.outputs.perfetto,
                      "Write the trace for Perfetto / chrome://tracing (simulated microseconds)"));
  output(cmd->add_option(
      "--report", a.outputs.report,
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
