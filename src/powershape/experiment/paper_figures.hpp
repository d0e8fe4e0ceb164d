#pragma once
// The chunking paper's figures on the devices we only simulate, for `repro` to set beside what
// the simulated device predicts (REFERENCE.md: the paper on a DGX Spark and an L40S).
#include <string>

namespace powershape::experiment {

// What the paper measured for this profile ("dgx-spark", "l40s") and workload ("msm",
// "finetune:qwen2-0.5b"); "" where it reported nothing comparable.
std::string paper_figure(const std::string& profile, const std::string& workload);

}  // namespace powershape::experiment
