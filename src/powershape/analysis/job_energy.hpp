#pragma once
// A job's energy beyond its GPUs' summaries, as Zeus and CodeCarbon give it: the CPU's RAPL zones
// over the run, and the energy a token where the job marks its steps. `monitor` prints and writes
// these; the same JSON goes into --json and the report's job table.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "powershape/analysis/summary.hpp"
#include "powershape/telemetry/rapl.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::analysis {

// Each RAPL zone's energy between two readings ({"package-0": J, ...}, null for a zone that
// could not be read); null where there is no zone.
nlohmann::json cpu_energy(const telemetry::RaplCounters& rapl,
                          const std::vector<std::optional<uint64_t>>& from,
                          const std::vector<std::optional<uint64_t>>& to);

// The energy a token where the job marked its steps (`step` regions: powershape.step, `mark begin
// step`), tokens_per_step each: the GPUs' energy inside the steps over their tokens, the whole
// run's (summaries' "all") over the same tokens, and with the CPUs' (cpu_energy's, where every
// zone was read) the node's (CodeCarbon#1347). Null without steps, tokens or the steps' energy.
nlohmann::json energy_per_token(const trace::Trace& t, const std::vector<Summary>& summaries,
                                const nlohmann::json& cpu, double tokens_per_step);

}  // namespace powershape::analysis
