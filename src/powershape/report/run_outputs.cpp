#include "powershape/report/run_outputs.hpp"

#include <stdexcept>

#include "powershape/report/html_report.hpp"
#include "powershape/trace/chrome_trace.hpp"
#include "powershape/trace/json_file.hpp"

namespace powershape::report {

bool write_outputs(const RunOutputs& paths, const trace::Trace& t, const RunRecord& r,
                   const SayFn& say) {
  const nlohmann::json summary = r.summaries ? analysis::to_json(*r.summaries) : nlohmann::json();
  bool written = true;
  const auto attempt = [&](const std::string& path, const char* output, const auto& write) {
    if (path.empty()) return;
    try {
      write();
    } catch (const std::runtime_error& e) {
      say(output, e.what());
      written = false;
    }
  };
  attempt(paths.perfetto, "perfetto", [&] { trace::write_chrome_trace(paths.perfetto, t); });
  attempt(paths.json, "json", [&] {
    trace::Trace meta = t;  // the samples are the CSV's
    meta.samples.clear();
    meta.processes.clear();
    trace::write_json(paths.json, {meta, summary, r.cpu, r.per_token, r.by_process});
  });
  attempt(paths.report, "report", [&] {
    ReportInputs in;
    in.title = r.title;
    in.trace = t;
    in.summary = summary;
    in.job = nlohmann::json::object();
    if (!r.cpu.is_null()) (*in.job)["cpu_energy"] = r.cpu;
    if (!r.per_token.is_null()) (*in.job)["energy_per_token"] = r.per_token;
    if (!r.by_process.is_null()) (*in.job)["gpu_energy_by_process"] = r.by_process;
    if (write_report(paths.report, in))
      say("", paths.report + ": text that is not UTF-8 is shown as U+FFFD");
  });
  return written;
}

}  // namespace powershape::report
