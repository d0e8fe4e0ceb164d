#pragma once
// Figures measured elsewhere, for `repro` and `advise` to set beside what a simulated device
// predicts: the chunking paper's on the devices we only simulate (REFERENCE.md: a DGX Spark, an
// L40S), and our own H200 measurements (docs/results.md) for the simulated H200.
#include <cstdio>
#include <string>

#include "powershape/experiment/engine.hpp"

namespace powershape::experiment {

// What the paper measured for this profile ("dgx-spark", "l40s") and workload ("msm",
// "finetune:qwen2-0.5b"); "" where it reported nothing comparable.
std::string paper_figure(const std::string& profile, const std::string& workload);

// Which question a measured figure answers.
enum class Question { kChunks, kSetting };

// What a real GPU of this profile ("h200") measured for the same question about the same workload
// (workload::kind_name_of: "lmhead 131072x896x151936 dw=bf16"), with its date, its command and its
// data; "" where nothing was measured.
std::string measured_figure(const std::string& profile, const std::string& workload, Question q);

// Beside a simulated device's table of chunk counts (`r`, two configurations or more): what a real
// GPU of the profile measured for the workload (its kind_name_of), and what the paper reported
// for it (its --workload name) against the model's best.
void print_reference_figures(std::FILE* out, const std::string& profile,
                             const std::string& kind_name, const std::string& workload,
                             const Result& r);

}  // namespace powershape::experiment
