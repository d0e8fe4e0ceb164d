#pragma once
// The lines under a recording's summaries: the CPUs' energy (and the node's, with the GPUs'),
// each GPU's energy by process, and the energy a token.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "powershape/analysis/process_energy.hpp"
#include "powershape/analysis/summary.hpp"
#include "powershape/telemetry/rapl.hpp"

namespace powershape::analysis {

// cpu: cpu_energy's (job_energy.hpp); nothing where it is null.
void print_cpu_energy(std::FILE* out, const nlohmann::json& cpu,
                      const telemetry::RaplCounters& rapl, const std::vector<Summary>& summaries);
// A line a GPU: its energy by process, the most first.
void print_by_process(std::FILE* out, std::vector<ProcessEnergy> v);
// per_token: energy_per_token's (job_energy.hpp); nothing where it is null.
void print_energy_per_token(std::FILE* out, const nlohmann::json& per_token,
                            double tokens_per_step);

}  // namespace powershape::analysis
