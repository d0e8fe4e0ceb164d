#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend_spec.hpp"
#include "output_lock.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/experiment/probe_record.hpp"
#include "powershape/report/html_report.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/int_list.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/workload/args.hpp"
#include "progress.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

constexpr const char* kDefaultPeriods = "1,2,5,10,20,50,100,200,500,1000,2000";

struct ProbeArgs {
  std::string device;
  std::string periods = kDefaultPeriods;
  std::string gaps = "idle,memory";
  workload::WorkloadArgs workload;  // --duty
  double window_s = 3;
  uint64_t seed = 1;
  std::string out, report;
  std::string record;  // a folder: record what a calibration needs instead
};

struct Point {
  std::string gap;
  double period_ms;
  double burst_tflops;
  double sm_clock_mhz;
  double power_capped;
  double avg_power_w;
};

int run_probe(const ProbeArgs& a) {
  const double duty = a.workload.duty;
  if (!(duty > 0 && duty < 1)) throw invalid_input("--duty: expected a fraction between 0 and 1");
  // Outputs are checked before minutes of measuring, not after.
  std::optional<OutputLock> out_lock, report_lock;
  if (!a.out.empty()) out_lock.emplace(a.out, "-o", OutputLock::Written::kAtEnd);
  if (!a.report.empty()) report_lock.emplace(a.report, "--report", OutputLock::Written::kAtEnd);
  std::vector<std::string> gaps;
  for (std::size_t s = 0; s <= a.gaps.size();) {
    auto c = a.gaps.find(',', s);
    gaps.push_back(a.gaps.substr(s, c == std::string::npos ? std::string::npos : c - s));
    if (gaps.back() != "idle" && gaps.back() != "memory")
      throw invalid_input("--gaps: expected idle and/or memory");
    if (c == std::string::npos) break;
    s = c + 1;
  }
  std::vector<int> periods = util::parse_int_list(a.periods, "periods");
  for (int p : periods) {
    if (p < 1 || p > 3'600'000)
      throw invalid_input("--periods: expected periods of 1 to 3600000 ms");
  }
  std::string why;
  auto backend = open_backend(a.device, a.seed, &why);
  std::printf("powershape probe on the %s%s\n", backend->describe().c_str(),
              why.empty() ? "" : (": no GPU here (" + why + ")").c_str());
  if (!a.record.empty()) {
    experiment::RecordPlan rp;
    rp.periods_ms = a.periods == kDefaultPeriods
                        ? std::vector<int>{2, 5, 10, 20, 50, 100, 200, 500, 1000}
                        : periods;
    rp.gaps = gaps;
    rp.window_s = std::min(a.window_s, 2.0);
    rp.progress = progress_line("condition", true);
    std::fflush(stdout);
    const double s = experiment::record_probe(*backend, rp, a.record);
    std::printf("recorded trace.csv, conditions.json and kernels.csv into %s in %.0f s\n",
                a.record.c_str(), s);
    return 0;
  }

  // Configuration 0: products back to back; then one square wave per gap and period.
  std::vector<workload::Plan> configs;
  configs.push_back(workload::products_plan({8192}));
  for (const auto& g : gaps) {
    for (int p : periods) {
      workload::WorkloadArgs w = a.workload;
      w.workload = "square";
      w.period_ms = p;
      w.gap = g;
      configs.push_back(workload::build_plan(w, 1, backend->peak_rates()));
    }
  }
  backend->set_configs(configs);

  auto response = experiment::step_response_ms(*backend, 0);
  backend->idle(2);
  auto cont = backend->measure(0, std::max(a.window_s, 5.0));
  std::vector<Point> points;
  std::printf("\n%-7s %10s %12s %10s %8s %8s\n", "gap", "period ms", "burst TF/s", "SM MHz",
              "capped", "W");
  std::size_t k = 1;
  const auto line = progress_line("measurement", true);
  const int64_t t0 = telemetry::steady_now_ns();
  const int total = static_cast<int>(configs.size() - 1);
  for (const auto& g : gaps) {
    for (int p : periods) {
      backend->idle(1);
      auto m = backend->measure(k++, std::max(a.window_s, 4 * p * 1e-3));
      points.push_back({g, static_cast<double>(p), m.compute_tflops, m.sm_clock_mhz, m.power_capped,
                        m.avg_power_w});
      if (line) std::fputs("\r\033[K", stderr);  // the table's row takes the progress line's place
      std::printf("%-7s %10d %12.1f %10.0f %7.0f%% %8.0f\n", g.c_str(), p, m.compute_tflops,
                  m.sm_clock_mhz, m.power_capped * 100, m.avg_power_w);
      std::fflush(stdout);
      if (line)
        line(static_cast<int>(k - 1), total,
             static_cast<double>(telemetry::steady_now_ns() - t0) * 1e-9);
    }
  }
  std::printf("%-7s %10s %12.1f %10.0f %7.0f%% %8.0f\n", "none", "-", cont.compute_tflops,
              cont.sm_clock_mhz, cont.power_capped * 100, cont.avg_power_w);

  double boost = 0;
  for (const auto& pt : points) boost = std::max(boost, pt.burst_tflops);
  // The power window: the longest burst that still runs within 3% of the best burst throughput,
  // with idle gaps (or the first gap kind probed).
  double window_ms = 0;
  for (const auto& pt : points) {
    if (pt.gap != gaps.front()) continue;
    if (pt.burst_tflops >= 0.97 * boost) window_ms = std::max(window_ms, pt.period_ms * duty);
  }
  std::printf(
      "\nboost (best burst) %.1f TFLOP/s, sustained %.1f TFLOP/s: sustained-to-boost %.3f\n", boost,
      cont.compute_tflops, cont.compute_tflops / boost);
  if (response) {
    std::printf(
        "controller response after a load step: the reported SM clock fell 5%% under its "
        "maximum after %.0f ms\n",
        *response);
  } else {
    std::printf(
        "controller response after a load step: the reported SM clock never fell 5%% under its "
        "maximum\n");
  }
  std::printf(
      "power window: compute phases up to %.0f ms run unthrottled (within 3%% of boost) "
      "between %s gaps at %.0f%% duty\n",
      window_ms, gaps.front().c_str(), duty * 100);

  if (!a.out.empty() || !a.report.empty()) {
    nlohmann::json j = {{"backend", backend->describe()},
                        {"device", backend->device_json()},
                        {"duty", duty},
                        {"boost_tflops", boost},
                        {"sustained_tflops", cont.compute_tflops},
                        {"sustained_to_boost", cont.compute_tflops / boost},
                        {"power_window_ms", window_ms}};
    j["step_response_ms"] = response ? nlohmann::json(*response) : nlohmann::json(nullptr);
    j["points"] = nlohmann::json::array();
    for (const auto& pt : points) {
      j["points"].push_back({{"gap", pt.gap},
                             {"period_ms", pt.period_ms},
                             {"burst_tflops", pt.burst_tflops},
                             {"sm_clock_mhz", pt.sm_clock_mhz},
                             {"power_capped", pt.power_capped},
                             {"avg_power_w", pt.avg_power_w}});
    }
    if (!a.out.empty()) util::write_json_file(a.out, j);
    if (!a.report.empty()) {
      report::ReportInputs in;
      in.title = "powershape probe: " + backend->describe();
      in.probe = j;
      report::write_report(a.report, in);
    }
  }
  return 0;
}

}  // namespace

void add_probe(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "probe",
      "Characterise a GPU's power management with square waves of compute and idle/memory");
  static ProbeArgs a;
  add_device_option(cmd, a.device);
  cmd->add_option("--periods", a.periods,
                  "Square-wave periods in ms (default 1,2,5,10,20,50,100,200,500,1000,2000)");
  cmd->add_option("--gaps", a.gaps, "Gap kinds: idle, memory or both (default idle,memory)");
  add_workload_options(*cmd, a.workload, WorkloadUse::kProbe);
  cmd->add_option("--window", a.window_s, "Seconds per measurement, at least 4 periods (default 3)")
      ->check(finite_in(0.01, 3600));
  cmd->add_option("--seed", a.seed, "Seed (simulator noise)")->check(seed_value());
  cmd->add_option("-o,--output", a.out, "Write the curve and figures as JSON");
  cmd->add_option("--record", a.record,
                  "Record what `sim calibrate --data` fits into this new folder instead (square "
                  "waves at 25/50/75% duty, sustained load, per-kernel times; ~5 min on an H200)");
  cmd->add_option("--report", a.report,
                  "Also write the result as a self-contained HTML page (see report)");
  cmd->callback([] { exit_code() = run_probe(a); });
}

}  // namespace powershape::cli
