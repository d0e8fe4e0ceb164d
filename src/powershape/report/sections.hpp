#pragma once
// The report's inputs read from what runs left: a trace (digested a row at a time), the JSON of
// monitor or sim beside it (its summary, and the job's energy beside the GPUs'), probe's, repro's
// and swing's JSON; the swing section derived from the trace's power where no swing JSON is given.
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "powershape/report/html_report.hpp"
#include "powershape/report/trace_digest.hpp"

namespace powershape::report {

struct ReportFiles {
  std::string trace, json, probe, repro, swing;  // paths; empty: none
  std::string title;                             // empty: "powershape report: " and a file's name
};

// Each GPU name's profile's power limit and the profile's name, for the GPUs a recording holds no
// limit of (sim::profile_limits: the simulator comes after the report).
using ProfileLimitsFn =
    std::function<std::map<std::string, std::pair<double, std::string>>(const trace::Trace&)>;

// Reads every file given; throws naming the file and what is wrong with it ("json": a summary
// needs its trace). whole: where not null, the trace read whole into it (for Perfetto), else it
// is read a row at a time. A trace with no power to analyse has no swing section (said on stderr).
ReportInputs read_inputs(const ReportFiles& f, const ProfileLimitsFn& profile_limits,
                         std::optional<trace::Trace>* whole);

}  // namespace powershape::report
