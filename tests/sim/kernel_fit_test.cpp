#include "powershape/sim/kernel_fit.hpp"

#include <gtest/gtest.h>

#include "error_of.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/sim/simulator.hpp"
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

// A softmax whose rows outgrow L2 moves twice the bytes: the fit reads which rows did from the
// configuration's plan, so one efficiency meets matmul-softmax-matmul at both row lengths.
TEST(KernelFit, TheSoftmaxsRowsOutgrowingL2AreCountedFromThePlan) {
  Profile truth = load_profile("h200");
  truth.l2_row_bytes = 100000;
  truth.memory_efficiency = {{"softmax", 0.3}};
  std::vector<workload::KernelTime> ks;
  for (const char* config : {"msm 32768x1024x32768 chunks=4", "msm 65536x512x65536 chunks=4",
                             "msm 65536x512x65536 chunks=16"}) {
    const auto plan = workload::make_plan(*workload::workload_named(config),
                                          {truth.peak_flops_per_s(), truth.peak_bytes_per_s()});
    for (std::size_t i = 0; i < plan.phases.size(); ++i) {
      const auto& ph = plan.phases[i];
      workload::KernelTime k{config, static_cast<int>(i), ph.name, ph.m, ph.n, ph.k, ph.bytes, 0,
                             1500};
      k.ms = phase_seconds(truth, ph, 1500) * 1e3;  // the simulator's own time for the phase
      ks.push_back(k);
    }
  }
  Profile p = truth;
  p.memory_efficiency.clear();
  const KernelFit f = fit_kernels(p, ks);
  EXPECT_NEAR(p.memory_efficiency_of("softmax"), 0.3, 0.003);
  for (const auto& t : f.after) EXPECT_NEAR(t.error(), 0, 0.01) << t.name;
}

TEST(KernelFit, NothingToFitIsAnError) {
  Profile p = load_profile("h200");
  EXPECT_EQ(testing::error_of([&] { fit_kernels(p, {}); }), "kernels.csv: no kernels to fit");
}

}  // namespace
}  // namespace powershape::sim
