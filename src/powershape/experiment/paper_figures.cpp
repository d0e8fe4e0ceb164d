#include "powershape/experiment/paper_figures.hpp"

#include <array>

namespace powershape::experiment {

std::string paper_figure(const std::string& profile, const std::string& workload) {
  struct Figure {
    const char* profile;
    const char* workload;
    const char* text;
  };
  static constexpr std::array<Figure, 4> kFigures = {{
      {"dgx-spark", "finetune:qwen2-0.5b",
       "the chunking paper on a DGX Spark: Qwen2-0.5B training 20% faster and 14% less energy "
       "(20 min 45 s to 16 min 30 s, 57 to 49 Wh of the box's; the LM head in chunks of 16 "
       "sequences against 64 at once)"},
      {"dgx-spark", "msm",
       "the chunking paper on a DGX Spark: matmul-softmax-matmul 15-22% faster"},
      {"l40s", "finetune:qwen2-0.5b", "the chunking paper on an L40S: 1-2% faster"},
      {"l40s", "msm", "the chunking paper on an L40S: 1-2% faster"},
  }};
  for (const Figure& f : kFigures)
    if (profile == f.profile && workload == f.workload) return f.text;
  return "";
}

}  // namespace powershape::experiment
