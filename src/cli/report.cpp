// `powershape report`: a trace and the JSON of monitor, sim, probe or repro as one HTML page.
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>

#include "powershape/analysis/swing.hpp"
#include "powershape/report/html_report.hpp"
#include "powershape/report/sections.hpp"
#include "powershape/report/trace_digest.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/trace/chrome_trace.hpp"
#include "powershape/trace/csv_reader.hpp"
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
  util::refuse_input_as_output(a.out, "-o", inputs);
  util::refuse_input_as_output(a.perfetto, "--perfetto", inputs);
  if (!a.perfetto.empty() && a.trace.empty()) throw invalid_input("--perfetto: needs a trace");
  report::ReportInputs in;
  in.title = a.title;
  std::optional<trace::Trace> whole;  // for --perfetto, or a file whose rows are out of order
  if (!a.trace.empty()) {
    // Read twice, a row at a time: a day of a node's samples fits in memory.
    if (a.perfetto.empty())
      in.digest = report::digest_file(a.trace, report::kMaxBins, a.json.empty());
    if (!in.digest) {
      whole = trace::read_csv(a.trace);
      in.digest = report::digest(*whole, report::kMaxBins, a.json.empty());
    }
  }
  if (in.digest) in.profile_limits = sim::profile_limits(in.digest->header);
  if (!a.json.empty()) {
    if (a.trace.empty()) throw invalid_input("--json: it summarises a trace; give the trace too");
    const nlohmann::json j = util::read_as(a.json, [](const nlohmann::json& j) {
      if (!j.is_object() || !j.contains("summary") || !j.at("summary").is_array())
        throw invalid_input("no 'summary' list (not a monitor or sim --json file?)");
      return j;
    });
    in.summary = j.at("summary");
    try {
      in.job = report::job_of(j);
    } catch (const std::runtime_error& e) {
      rethrow_with("--json: " + a.json + ": ", e);
    }
  }
  if (!a.probe.empty()) in.probe = util::read_json_file(a.probe);
  if (!a.repro.empty()) in.repro = util::read_json_file(a.repro);
  if (!a.swing.empty())
    in.swing = util::read_json_file(a.swing);
  else if (in.digest)
    in.swing = report::swing_of(*in.digest, in.profile_limits);
  if (in.title.empty()) {
    in.title = !a.trace.empty()   ? a.trace
               : !a.repro.empty() ? a.repro
               : !a.probe.empty() ? a.probe
                                  : a.swing;
    in.title = "powershape report: " + in.title.substr(in.title.find_last_of('/') + 1);
  }
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
