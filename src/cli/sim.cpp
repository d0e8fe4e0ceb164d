#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "powershape/analysis/summary.hpp"
#include "powershape/analysis/summary_table.hpp"
#include "powershape/experiment/open_backend.hpp"
#include "powershape/report/html_report.hpp"
#include "powershape/sim/calibrate.hpp"
#include "powershape/sim/mechanism_fit.hpp"
#include "powershape/sim/simulator.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/trace/chrome_trace.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/csv_writer.hpp"
#include "powershape/trace/json_file.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/share_dir.hpp"
#include "progress.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct SimArgs {
  std::string profile = "h200";
  std::string power_mode;
  workload::WorkloadArgs workload;
  double seconds = 10;
  int iterations = 0;
  double power_limit_w = 0, clock_cap_mhz = 0, step_ms = 0.1;
  uint64_t seed = 1;
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
  sim::Profile p = sim::load_profile(a.profile);
  if (!a.power_mode.empty()) sim::apply_power_mode(p, a.power_mode);
  if (a.power_limit_w > p.power_limit_w && a.power_limit_w <= 2 * p.power_limit_w) {
    std::fprintf(stderr,
                 "powershape: warning: --power-limit %.0f W is above %s's own %.0f W limit (the "
                 "card would refuse it); simulated as asked\n",
                 a.power_limit_w, p.name.c_str(), p.power_limit_w);
  }
  auto plans = workload_plans(a.workload, {p.peak_flops_per_s(), p.peak_bytes_per_s()});
  if (plans.size() != 1)
    throw invalid_input("--chunks: sim runs one chunk count (repro compares several)");
  const workload::Plan& plan = plans.front();
  sim::SimOptions o;
  o.seconds = a.iterations > 0 ? 0 : a.seconds;
  o.iterations = a.iterations;
  o.power_limit_w = a.power_limit_w;
  o.clock_cap_mhz = a.clock_cap_mhz;
  o.step_s = a.step_ms * 1e-3;
  o.seed = a.seed;
  if (!(a.step_ms > 0 && a.step_ms <= 10)) throw invalid_input("--step-ms: expected 0 < ms <= 10");
  sim::check_settings(p, o);  // refused before anything is printed
  sim::check_run(p, plan, o.iterations, o.seconds, o.step_s);
  std::printf("simulated device: %s (%s profile), workload %s\n", p.name.c_str(), p.status.c_str(),
              plan.name.c_str());
  sim::SimResult r = sim::simulate(p, plan, o);
  auto summaries = analysis::summarize(r.trace);
  analysis::print_summaries(stdout, "'" + plan.name + "'", r.trace, summaries, "--json");
  const int iters = r.run.iterations;
  const double secs = static_cast<double>(r.run.end_ns - r.run.begin_ns) * 1e-9;
  std::printf(
      " workload: %d iterations in %.3f s: %.3f ms and %.2f J per iteration, %.1f TFLOP/s, "
      "real SM clock mean %.0f MHz, model die %.1f C at the end of the run (the reported "
      "temperature is the sensor's)\n",
      iters, secs, secs / iters * 1e3, r.run.energy_j / iters,
      plan.total_flops() * iters / secs * 1e-12, r.run.mean_clock_mhz, r.end_temp_c);
  if (!a.out_csv.empty()) trace::write_csv(a.out_csv, r.trace, a.every_row);
  if (!a.out_perfetto.empty()) trace::write_chrome_trace(a.out_perfetto, r.trace);
  if (!a.out_report.empty()) {
    report::ReportInputs in;
    in.title = "powershape sim: " + plan.name + " on " + p.name;
    in.trace = r.trace;
    in.summary = analysis::to_json(summaries);
    report::write_report(a.out_report, in);
  }
  if (!a.out_json.empty()) {
    trace::Trace meta = r.trace;
    meta.samples.clear();
    nlohmann::json summary = analysis::to_json(summaries);
    trace::write_json(a.out_json, {meta, summary, nullptr, nullptr, nullptr});
  }
  return 0;
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
  const auto line = progress_line("simulation", true);
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
  // One width for every table's names, so that each column lines up under its heading.
  int w = 50;
  for (const auto& t : c.after) w = std::max(w, static_cast<int>(t.name.size()));
  std::printf("%-*s %10s %10s %8s %10s %8s\n", w, "figure", "measured", "before", "error", "after",
              "error");
  for (std::size_t i = 0; i < c.after.size(); ++i) {
    const auto& b = c.before[i];
    const auto& t = c.after[i];
    const int digits = t.measured < 10 ? 3 : 1;  // a ratio to one chunk shows its third place
    std::printf("%-*s %10.*f %10.*f %+7.1f%% %10.*f %+7.1f%%\n", w, t.name.c_str(), digits,
                t.measured, digits, b.simulated, b.error() * 100, digits, t.simulated,
                t.error() * 100);
  }
  std::printf("%-*s %10s %10.2f %8s %10.2f\n", w, "temperature RMS error C (every reading)", "",
              c.thermal_rms_before_c, "", c.thermal_rms_after_c);
  if (const auto rb = sim::summarize_ratios(c.before), ra = sim::summarize_ratios(c.after);
      ra.count > 0) {
    std::printf(
        "  chunk ratios (%d): before %d within 0.5 point of the GPU's, %d on its side of 1, "
        "%.2f points off on average, 9 in 10 within %.2f; after %d, %d, %.2f, %.2f "
        "(accuracy.chunk_ratio_points)\n",
        ra.count, rb.within_half_point, rb.same_side, rb.mean_points, rb.p90_points,
        ra.within_half_point, ra.same_side, ra.mean_points, ra.p90_points);
    if (ra.several_runs > 0) {
      std::printf(
          "  ratios measured in more than one run (%d): the runs of one span up to %.2f points; "
          "the fitted model lies within half a point of their span for %d",
          ra.several_runs, ra.widest_run_range_points,
          ra.several_runs - static_cast<int>(ra.outside_runs.size()));
      for (std::size_t i = 0; i < ra.outside_runs.size(); ++i)
        std::printf("%s%s", i == 0 ? " (not: " : ", ", ra.outside_runs[i].c_str());
      std::printf("%s\n", ra.outside_runs.empty() ? "" : ")");
    }
  }
  // How far memory kernels run above the products around them, on the card and in the model.
  double swing_card = 0, swing_model = 0;
  int configs = 0;
  for (std::size_t i = 0; i + 1 < c.after.size(); ++i) {
    if (sim::is_phase_clock(c.after[i]) && sim::is_phase_clock(c.after[i + 1])) {
      swing_card += c.after[i + 1].measured - c.after[i].measured;
      swing_model += c.after[i + 1].simulated - c.after[i].simulated;
      ++configs;
      ++i;
    }
  }
  if (configs > 0)
    std::printf(
        "  real MHz of products and memory kernels (the clock probe beside each kernel): shown, "
        "not fitted: memory kernels run %+.0f MHz from the products on the card, %+.0f in the "
        "model, which runs every phase under one clock cap\n",
        swing_card / configs, swing_model / configs);
  for (const auto& t : c.after) {
    // A figure the fit could not move says why, not only that it did not.
    if (t.name == "step response ms" && t.simulated < 1)
      std::printf(
          "  step response: the model's clock leaves 1700 MHz within its first sensor update, "
          "where "
          "the card held its boost %.0f ms: the model has no boost hold before its power loop acts "
          "(a difference of the model, not of a fitted figure; docs/sim.md)\n",
          t.measured);
    else if (t.name == "step response ms" && std::abs(t.error()) > 0.1)
      std::printf(
          "  step response: measured between two NVML readings that update every ~100 ms (here "
          "from the first power reading over 400 W, which updates with the clock), it moves only "
          "in the sensor's steps; a recording that marks the load's start (probe --record) "
          "measures it from there\n");
  }
  if (!c.squares_after.empty()) {
    std::printf("\n%-*s %10s %10s %8s %10s %8s\n", w, "other square waves (shown, not fitted)",
                "measured", "before", "error", "after", "error");
    int within = 0;
    double worst = 0;
    for (std::size_t i = 0; i < c.squares_after.size(); ++i) {
      const auto& b = c.squares_before[i];
      const auto& t = c.squares_after[i];
      std::printf("%-*s %10.1f %10.1f %+7.1f%% %10.1f %+7.1f%%\n", w, t.name.c_str(), t.measured,
                  b.simulated, b.error() * 100, t.simulated, t.error() * 100);
      within += std::abs(t.error()) <= 0.03;
      worst = std::max(worst, std::abs(t.error()));
    }
    std::printf("  after: %d of %zu within 3%%, the worst %.1f%% off\n", within,
                c.squares_after.size(), worst * 100);
  }
  if (!c.kernels_after.empty()) {
    std::printf("\n%-*s %10s %10s %8s %10s %8s\n", w, "kernels (each timed alone)", "measured",
                "before", "error", "after", "error");
    for (std::size_t i = 0; i < c.kernels_after.size(); ++i) {
      const auto& b = c.kernels_before[i];
      const auto& t = c.kernels_after[i];
      std::printf("%-*s %10.2f %10.2f %+7.1f%% %10.2f %+7.1f%%\n", w, t.name.c_str(), t.measured,
                  b.simulated, b.error() * 100, t.simulated, t.error() * 100);
    }
    const auto& q = c.profile;
    std::printf(
        "fitted kernels: launch %.1f us, epilogue exposed up to k = %.0f, memory efficiency",
        q.kernel_launch_us, q.epilogue_k);
    for (const auto& [k, v] : q.memory_efficiency) std::printf(" %s %.3f", k.c_str(), v);
    if (q.issue_activity > 0) std::printf(", issue-bound SM activity %.2f", q.issue_activity);
    std::printf("\n");
  }
  const auto& q = c.profile;
  std::printf(
      "\nfitted: flops_per_cycle %.0f, dynamic_w %.1f, fast_limit_w %.1f, window_ms %.1f, "
      "gain_mhz_per_w_s %.3f, recovery_mhz_per_s %.0f, memory_w %.0f, memory_phase_activity %.2f; "
      "thermal r_die %.4f C/W tau_die %.2f s "
      "r_sink %.4f C/W "
      "tau_sink %.1f s, ambient %.1f C\n",
      q.flops_per_cycle, q.dynamic_w, q.fast_limit_w, q.window_ms, q.gain_mhz_per_w_s,
      q.recovery_mhz_per_s, q.memory_w, q.memory_phase_activity, q.r_die_c_per_w, q.tau_die_s,
      q.r_sink_c_per_w, q.tau_sink_s, q.ambient_c);
  if (q.medium_gain_mhz_per_w_s > 0)
    std::printf("fitted medium loop: window_ms %.1f, gain_mhz_per_w_s %.1f\n", q.medium_window_ms,
                q.medium_gain_mhz_per_w_s);
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
  cmd->add_option("--seconds", a.seconds, "Run the workload for this long (default 10)")
      ->check(finite_in(1e-3, 86400));
  cmd->add_option("--iterations", a.iterations, "Run the workload this many times instead")
      ->check(CLI::Range(0, 100'000'000));
  cmd->add_option("--power-limit", a.power_limit_w, "Power limit in W (default the profile's)")
      ->check(finite_in(0, 100'000));
  cmd->add_option("--clock-cap", a.clock_cap_mhz, "Cap the SM clock at this many MHz")
      ->check(finite_in(0, 100'000));
  cmd->add_option("--step-ms", a.step_ms, "Simulation step in ms (default 0.1)")
      ->check(finite_in(1e-3, 10));
  cmd->add_option("--seed", a.seed, "Seed of the sensor noise (default 1)")->check(seed_value());
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
