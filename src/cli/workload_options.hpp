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

// Whether --workload is a fine-tune (finetune:MODEL); otherwise it must name a chunked kind (repro
// and tune compare chunk counts): an Error naming the kinds that are, for any other.
bool chunked_or_finetune(const workload::WorkloadArgs& a);

// The plans the options describe on a device with these unthrottled rates; --recorded-on's
// profile is looked up here. Throws with a one-line reason.
std::vector<workload::Plan> workload_plans(workload::WorkloadArgs& a,
                                           const workload::Rates& device);

}  // namespace powershape::cli
