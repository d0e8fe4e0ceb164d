#pragma once
#include <CLI/CLI.hpp>

#include "powershape/workload/args.hpp"

namespace powershape::cli {

// The workload options, declared once: `sim` runs one workload (every option), `repro` compares
// chunk counts of msm or the LM head (--chunks is a list), `probe` sizes its square waves (--duty).
enum class WorkloadUse { kSim, kRepro, kProbe };
void add_workload_options(CLI::App& cmd, workload::WorkloadArgs& a, WorkloadUse use);
// --exp-in-product, which add_workload_options declares and `tune` (options of its own) too.
void add_exp_in_product_flag(CLI::App& cmd, workload::WorkloadArgs& a);

}  // namespace powershape::cli
