#include "powershape/experiment/reference_figures.hpp"

#include <array>
#include <cmath>

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

std::string measured_figure(const std::string& profile, const std::string& workload, Question q) {
  struct Figure {
    const char* profile;
    const char* workload;
    Question question;
    const char* text;
  };
  // docs/results.md, "Chunk count" and "Advise"; the data folders are in data/h200/.
  constexpr const char* kLmHead131k =
      "measured on four H200s (2026-12-01, dW in fp32; repro on the GPU, 3 rounds, "
      "data/h200/repro_spread and three more): 8 chunks 1.0-2.1% faster than one piece "
      "(0.979-0.990), 16 chunks 0.7-1.7% slower";
  constexpr const char* kLmHead16k =
      "measured on an H200 (2026-11-30 and 12-01, dW in fp32; repro on the GPU, "
      "docs/h200/repro_lmhead_16384.json): 2 chunks 3.6% slower [1.7, 5.5], 4 chunks 2.8% slower "
      "[2.5, 3.0], 16 chunks 12.3% slower";
  static constexpr std::array<Figure, 6> kFigures = {{
      {"h200", "lmhead 16384x896x151936", Question::kChunks, kLmHead16k},
      {"h200", "lmhead 16384x896x151936 dw=bf16", Question::kChunks, kLmHead16k},
      {"h200", "msm 65536x512x65536", Question::kChunks,
       "measured on four H200s (2026-12-01; repro on the GPU, 3 rounds, data/h200/repro_spread "
       "and three more): 2-8 chunks within 0.1% of one piece (0.999-1.001), 16 chunks 1.7-1.9% "
       "slower, 32 chunks 3.2-3.6% slower"},
      {"h200", "lmhead 131072x896x151936", Question::kChunks, kLmHead131k},
      {"h200", "lmhead 131072x896x151936 dw=bf16", Question::kChunks, kLmHead131k},
      {"h200", "lmhead 16384x896x151936 dw=bf16", Question::kSetting,
       "measured as found on an H200 and predicted from its trace (2026-12-01, dW in fp32; advise "
       "on the GPU, 20 s a setting, at most 5% slower): power limit 640 W, energy -2.9% "
       "[-3.6, -2.7], "
       "time +4.2% [+3.0, +4.6]"},
  }};
  for (const Figure& f : kFigures)
    if (profile == f.profile && workload == f.workload && q == f.question) return f.text;
  return "";
}

void print_reference_figures(std::FILE* out, const std::string& profile,
                             const std::string& kind_name, const std::string& workload,
                             const Result& r) {
  if (r.configs.size() < 2) return;
  if (const std::string measured = measured_figure(profile, kind_name, Question::kChunks);
      !measured.empty())
    std::fprintf(out, "\nthe table is the simulated device's prediction; %s\n", measured.c_str());
  const std::string paper = paper_figure(profile, workload);
  if (paper.empty()) return;
  const auto& best = r.configs[r.best_time == r.baseline ? (r.baseline == 0 ? 1 : 0) : r.best_time];
  std::fprintf(
      out,
      "\nthe model predicts %s %.1f%% %s and %.1f%% %s energy than the baseline (a simulated "
      "device's prediction, not a measurement); %s\n",
      best.name.c_str(), std::abs(1 - best.time_ratio.mid) * 100,
      best.time_ratio.mid <= 1 ? "faster" : "slower", std::abs(1 - best.energy_ratio.mid) * 100,
      best.energy_ratio.mid <= 1 ? "less" : "more", paper.c_str());
}

}  // namespace powershape::experiment
