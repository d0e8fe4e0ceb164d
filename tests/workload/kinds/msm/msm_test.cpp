#include "powershape/workload/kinds/msm/msm.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "powershape/util/error.hpp"

namespace powershape::workload {
namespace {

// By hand: one row over two columns whose scores are 0 and ln 3 (q = 1, d = 1): weights 1/4 and
// 3/4, unscaled and unmasked (the paper's matmul-softmax-matmul, not attention).
TEST(MsmReference, EachRowIsASoftmaxOfItsScoresTimesV) {
  const auto o = msm_reference({1, 2}, {0, static_cast<float>(std::log(3.0))}, {2, 6}, 2, 1, 2);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_NEAR(o[0], 0.25 * 2 + 0.75 * 6, 1e-6);
  // The second row (q = 2): scores 0 and 2 ln 3, weights 1/10 and 9/10.
  EXPECT_NEAR(o[1], 0.1 * 2 + 0.9 * 6, 1e-6);
  EXPECT_THROW(msm_reference({1}, {1, 2}, {1, 2}, 2, 1, 2), Error);
}

}  // namespace
}  // namespace powershape::workload
