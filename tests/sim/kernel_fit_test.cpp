#include "powershape/sim/kernel_fit.hpp"

#include <gtest/gtest.h>

#include "error_of.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::sim {
namespace {

// Kernel times a profile with known kernel constants would have recorded: the fit must find
// them again from the times alone.
std::vector<workload::KernelTime> recorded_by(const Profile& truth) {
  std::vector<workload::KernelTime> ks;
  for (int chunks : {1, 2, 4, 8, 16, 32, 64}) {
    const int64_t rows = 16384 / chunks, v = 128256, d = 4096;
    const std::string config = "lmhead chunks=" + std::to_string(chunks);
    for (int c = 0; c < chunks; ++c) {
      workload::KernelTime pass{config, 0, "cross_entropy", 0, 0, 0, 4.0 * rows * v, 0, 1500};
      workload::KernelTime soft{config, 0, "softmax", 0, 0, 0, 4.0 * rows * 65536, 0, 1500};
      workload::KernelTime dw{
          config, 0, "dw", v, d, rows, workload::product_bytes(v, d, rows, 4, c > 0), 0, 1500};
      // dX of a narrow head: 448 tiles at 8192 rows fill 3.4 waves of 132 SMs.
      workload::KernelTime dx{
          config, 0, "dx", rows, 896, v, workload::product_bytes(rows, 896, v, 2, false), 0, 1500};
      for (auto* k : {&pass, &soft, &dw, &dx}) {
        k->ms = kernel_ms(truth, *k);
        ks.push_back(*k);
      }
    }
  }
  return ks;
}

TEST(KernelFit, FindsTheLaunchCostEpilogueWavesAndBandwidthsItWasRecordedWith) {
  Profile truth = load_profile("h200");
  truth.kernel_launch_us = 6;
  truth.epilogue_k = 256;
  truth.wave_quantization = 0.6;
  truth.epilogue_efficiency = 0.7;
  truth.memory_efficiency = {{"softmax", 0.2}};
  Profile p = truth;
  p.kernel_launch_us = 0;
  p.epilogue_k = 0;
  p.wave_quantization = 0;
  p.epilogue_efficiency = 1;
  p.memory_efficiency.clear();
  const KernelFit f = fit_kernels(p, recorded_by(truth));
  EXPECT_NEAR(p.kernel_launch_us, 6, 0.5);
  EXPECT_NEAR(p.epilogue_k, 256, 256 * 0.1);
  EXPECT_NEAR(p.wave_quantization, 0.6, 0.05);
  EXPECT_NEAR(p.epilogue_efficiency, 0.7, 0.05);
  EXPECT_NEAR(p.memory_efficiency_of("softmax"), 0.2, 0.01);
  EXPECT_NEAR(p.memory_efficiency_of("cross_entropy"), 1, 1e-9);  // a copy's pace: not listed
  ASSERT_EQ(f.after.size(), 7u);
  for (const auto& t : f.after) EXPECT_NEAR(t.error(), 0, 0.01) << t.name;
  // Before the fit, 64 chunks' dW accumulation and the softmax's pace were not accounted for.
  EXPECT_GT(std::abs(f.before.back().error()), 0.05);
}

TEST(KernelFit, NothingToFitIsAnError) {
  Profile p = load_profile("h200");
  EXPECT_EQ(testing::error_of([&] { fit_kernels(p, {}); }), "kernels.csv: no kernels to fit");
}

}  // namespace
}  // namespace powershape::sim
