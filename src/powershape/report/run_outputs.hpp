#pragma once
// The files a recorded run leaves beside its CSV (monitor's, sim's): the trace for Perfetto, its
// metadata and summaries as JSON, and the HTML report. Each is written on its own: one that fails
// is said and the others are still written, so that nothing recorded is lost with it.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "powershape/analysis/summary.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::report {

struct RunOutputs {
  std::string json, perfetto, report;  // paths; empty: not written
};

// What the run measured beside its trace; null where it has none.
struct RunRecord {
  std::string title;  // the report's
  const std::vector<analysis::Summary>* summaries = nullptr;
  nlohmann::json cpu, per_token, by_process;  // job_energy.hpp's and process_energy.hpp's JSON
};

// output: "json", "perfetto" or "report" where that one failed (what: why), "" for a note.
using SayFn = std::function<void(const std::string& output, const std::string& what)>;

// Writes each output asked for; false when any failed.
bool write_outputs(const RunOutputs& paths, const trace::Trace& t, const RunRecord& r,
                   const SayFn& say);

}  // namespace powershape::report
