#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backend_spec.hpp"
#include "powershape/experiment/probe_curve.hpp"
#include "powershape/experiment/probe_record.hpp"
#include "powershape/experiment/probe_table.hpp"
#include "powershape/report/html_report.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/int_list.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_lock.hpp"
#include "powershape/util/progress.hpp"
#include "powershape/workload/args.hpp"
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

int run_probe(const ProbeArgs& a) {
  // Outputs are checked before minutes of measuring, not after.
  const auto claimed = util::claim_outputs({{a.out, "-o"}, {a.report, "--report"}});
  experiment::ProbeOptions o;
  o.gaps = experiment::parse_gaps(a.gaps);
  o.periods_ms = util::parse_int_list(a.periods, "periods");
  o.workload = a.workload;
  o.window_s = a.window_s;
  experiment::check_probe_options(o);  // before a device is opened, --record's too
  std::string why;
  auto backend = open_backend(a.device, a.seed, &why);
  std::printf("powershape probe on the %s%s\n", backend->describe().c_str(),
              why.empty() ? "" : (": no GPU here (" + why + ")").c_str());
  if (!a.record.empty()) {
    experiment::RecordPlan rp;
    rp.periods_ms = a.periods == kDefaultPeriods
                        ? std::vector<int>{2, 5, 10, 20, 50, 100, 200, 500, 1000}
                        : o.periods_ms;
    rp.gaps = o.gaps;
    rp.window_s = std::min(a.window_s, 2.0);
    rp.progress = util::progress_line("condition", true);
    std::fflush(stdout);
    const double s = experiment::record_probe(*backend, rp, a.record);
    std::printf("recorded trace.csv, conditions.json and kernels.csv into %s in %.0f s\n",
                a.record.c_str(), s);
    return 0;
  }

  experiment::print_probe_heading(stdout);
  const auto line = util::progress_line("measurement", true);
  const int64_t t0 = telemetry::steady_now_ns();
  const auto c = experiment::probe_curve(
      *backend, o, [&](const experiment::ProbePoint& pt, int done, int total) {
        if (line) std::fputs("\r\033[K", stderr);  // the row takes the progress line's place
        experiment::print_probe_point(stdout, pt);
        std::fflush(stdout);
        if (line) line(done, total, static_cast<double>(telemetry::steady_now_ns() - t0) * 1e-9);
      });
  experiment::print_probe_curve(stdout, c, o.gaps.front());

  const nlohmann::json j = experiment::to_json(c, *backend);
  if (!a.out.empty()) util::write_json_file(a.out, j);
  if (!a.report.empty()) {
    report::ReportInputs in;
    in.title = "powershape probe: " + backend->describe();
    in.probe = j;
    report::write_report(a.report, in);
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
  output(cmd->add_option("-o,--output", a.out, "Write the curve and figures as JSON"));
  cmd->add_option("--record", a.record,
                  "Record what `sim calibrate --data` fits into this new folder instead (square "
                  "waves at 25/50/75% duty, sustained load, per-kernel times; ~5 min on an H200)");
  output(cmd->add_option("--report", a.report,
                         "Also write the result as a self-contained HTML page (see report)"));
  cmd->callback([] { exit_code() = run_probe(a); });
}

}  // namespace powershape::cli
