#pragma once
// Sections of the report read or derived from what a run left: the swing of the trace's power
// against the shipped grid spec, and the job's energy beside the GPUs' (monitor's JSON).
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "powershape/report/trace_digest.hpp"

namespace powershape::report {

// The swing section; none (said on stderr) where the trace has no power to analyse.
// profile_limits: each GPU name's profile's power limit and the profile's name, for GPUs the
// recording holds no limit of.
std::optional<nlohmann::json> swing_of(
    const TraceDigest& d,
    const std::map<std::string, std::pair<double, std::string>>& profile_limits);
// The job's energy a monitor JSON holds beside the GPUs' (RAPL, by process, a token); an entry
// of the wrong form is refused, naming it.
nlohmann::json job_of(const nlohmann::json& j);

}  // namespace powershape::report
