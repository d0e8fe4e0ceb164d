// `powershape report`: a trace and the JSON of monitor, sim, probe or repro as one HTML page.
#include <cstdio>
#include <optional>

#include "powershape/report/html_report.hpp"
#include "powershape/report/sections.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/trace/chrome_trace.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_lock.hpp"
#include "subcommands.hpp"
#include "validators.hpp"

namespace powershape::cli {
namespace {

struct ReportArgs {
  std::string trace, json, probe, repro, swing, out, perfetto, title;
};

int run_report(const ReportArgs& a) {
  const std::vector<std::string> inputs{a.trace, a.json, a.probe, a.repro, a.swing};
  const auto claimed = util::claim_outputs({{a.out, "-o"}, {a.perfetto, "--perfetto"}}, inputs);
  std::optional<trace::Trace> whole;  // for --perfetto
  const report::ReportInputs in =
      report::read_inputs({a.trace, a.json, a.probe, a.repro, a.swing, a.title},
                          sim::profile_limits, a.perfetto.empty() ? nullptr : &whole);
  if (report::write_report(a.out, in)) {
    std::fprintf(stderr, "powershape: %s: text that is not UTF-8 is shown as U+FFFD\n",
                 a.out.c_str());
  }
  if (!a.perfetto.empty()) trace::write_chrome_trace(a.perfetto, *whole);
  std::fprintf(stderr, "powershape: wrote %s\n", a.out.c_str());
  return 0;
}

}  // namespace

void add_report(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page (opens offline): power, clocks, temperature and "
      "throttle reasons over time with regions, the summary, probe's curve, repro's ratios");
  static ReportArgs a;
  cmd->add_option("trace", a.trace, "A trace CSV written by monitor or sim")
      ->transform(recording_named);
  cmd->add_option("--json", a.json,
                  "monitor's --json file for the trace: its summary, and the job's energy (the "
                  "CPUs' RAPL, each GPU's by process, a token)");
  cmd->add_option("--probe", a.probe, "A probe result (probe -o): the burst-throughput curve");
  cmd->add_option("--repro", a.repro, "A repro result (repro -o): ratios with intervals");
  cmd->add_option("--swing", a.swing,
                  "A swing result (swing --json): the spectrum and the grid spec's verdicts "
                  "(default: the trace's own against the shipped spec)");
  output(cmd->add_option("-o,--output", a.out, "The HTML file to write")->required());
  output(cmd->add_option("--perfetto", a.perfetto,
                         "Also write the trace for Perfetto / chrome://tracing"));
  cmd->add_option("--title", a.title, "The page's title (default: the input's file name)");
  cmd->callback([] { exit_code() = run_report(a); });
}

}  // namespace powershape::cli
