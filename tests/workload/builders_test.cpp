#include "powershape/workload/builders.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace powershape::workload {

TEST(Builders, TheLmHeadCountsSixNdvAndChunksRaggedly) {
  LmHeadShape s{1000, 896, 151936};
  Plan one = lmhead_plan(s, 1);
  EXPECT_DOUBLE_EQ(one.total_flops(), 6.0 * 1000 * 896 * 151936);
  Plan three = lmhead_plan(s, 3);  // 334 + 334 + 332 tokens
  EXPECT_EQ(three.phases.size(), 12u);
  EXPECT_DOUBLE_EQ(three.total_flops(), one.total_flops());
  EXPECT_DOUBLE_EQ(three.phases[8].flops, 2.0 * 332 * 896 * 151936);
  EXPECT_DOUBLE_EQ(three.phases[1].bytes, 4.0 * 334 * 151936);  // fused: bf16 read + write
  EXPECT_EQ(lmhead_plan(s, 2, false).phases.size(), 4u);
  EXPECT_DOUBLE_EQ(lmhead_plan(s, 1, true, 16).phases[1].bytes, 16.0 * 1000 * 151936);
}

TEST(Builders, BadShapesAreRejected) {
  EXPECT_THROW(lmhead_plan({0, 896, 100}, 1), std::invalid_argument);
  EXPECT_THROW(lmhead_plan({10, 896, 100}, 11), std::invalid_argument);
  EXPECT_THROW(msm_plan(10, 0, 10, 1), std::invalid_argument);
  EXPECT_THROW(square_plan(0.01, 1.0, Gap::kIdle, 1e12, 1e12), std::invalid_argument);
}

TEST(Builders, EfficiencyFallsForSmallAndShortProducts) {
  EXPECT_GT(product_efficiency(8192, 8192, 8192), 0.99);
  EXPECT_LT(product_efficiency(128, 128, 8192), 0.02);   // two k-splits of one tile on 132 multiprocessors
  EXPECT_LT(product_efficiency(8192, 8192, 64), 0.7);    // a short k
  EXPECT_GT(product_efficiency(2048, 896, 151936), 0.95);  // long k is split
}

TEST(Builders, ASquareWaveHasItsDutyCycle) {
  Plan p = square_plan(0.01, 0.25, Gap::kMemory, 1e15, 2e12);
  ASSERT_EQ(p.phases.size(), 2u);
  EXPECT_DOUBLE_EQ(p.phases[0].flops, 0.0025 * 1e15);
  EXPECT_EQ(p.phases[1].kind, PhaseKind::kMemory);
  EXPECT_DOUBLE_EQ(p.phases[1].bytes, 0.0075 * 2e12);
  Plan m = msm_plan(100, 64, 1000, 4);
  EXPECT_EQ(m.phases.size(), 12u);
  EXPECT_DOUBLE_EQ(m.total_flops(), 4.0 * 100 * 64 * 1000);
}

}  // namespace powershape::workload
