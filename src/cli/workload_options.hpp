#pragma once
#include <CLI/CLI.hpp>

#include "powershape/workload/args.hpp"

namespace powershape::cli {

// The workload options, declared once: `sim` runs one workload (every option), `repro` and `tune`
// compare chunk counts of a chunked kind (--chunks is a list; their defaults set in `a` before),
// `probe` sizes its square waves (--duty).
enum class WorkloadUse { kSim, kCompare, kProbe };
void add_workload_options(CLI::App& cmd, workload::WorkloadArgs& a, WorkloadUse use);

}  // namespace powershape::cli
