#include "powershape/experiment/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "powershape/util/error.hpp"

namespace powershape::experiment {

TEST(Stats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(Stats, TheExpandedTailMatchesStudentsT) {
  // n = 8: t(0.025, 7) = 2.3646, times sqrt(8/7): Phi(-2.5279) = 0.00574.
  EXPECT_NEAR(expanded_tail(8, 0.05), 0.00574, 0.00005);
  // n = 2: t(0.025, 1) = 12.706; n = 3: t(0.025, 2) = 4.303; many pairs: 1.96 -> 0.025.
  EXPECT_NEAR(expanded_tail(2, 0.05), 0.5 * std::erfc(std::sqrt(2.0) * 12.706 / std::sqrt(2.0)),
              1e-12);
  EXPECT_NEAR(expanded_tail(3, 0.05), 0.5 * std::erfc(std::sqrt(1.5) * 4.303 / std::sqrt(2.0)),
              1e-5);
  EXPECT_NEAR(expanded_tail(2000, 0.05), 0.025, 0.0005);
}

// The interval's promise: on a null effect (ratios around 1 with noise), a 95% interval holds 1
// in about 95% of runs. Checked over 1000 seeds with normal and heavy-tailed (Student t, 3
// degrees of freedom) noise, from 2 pairs up.
double null_coverage(int pairs, bool heavy, int seeds) {
  int held = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    std::normal_distribution<double> normal(0, 0.01);
    std::student_t_distribution<double> t3(3);
    auto noise = [&] { return heavy ? 0.006 * t3(rng) : normal(rng); };
    std::vector<double> a, b;
    for (int i = 0; i < pairs; ++i) {
      a.push_back(10 * (1 + noise()));
      b.push_back(10 * (1 + noise()));
    }
    if (!ratio_interval(a, b, static_cast<uint64_t>(seed), 2000).excludes(1)) ++held;
  }
  return static_cast<double>(held) / seeds;
}

TEST(Stats, TheIntervalHoldsANullEffectAtItsLevel) {
  for (int pairs : {2, 3, 5, 8, 20}) {
    for (bool heavy : {false, true}) {
      const double c = null_coverage(pairs, heavy, 1000);
      EXPECT_GE(c, 0.93) << pairs << " pairs" << (heavy ? ", heavy tails" : "");
      EXPECT_LE(c, 0.98) << pairs << " pairs"
                         << (heavy ? ", heavy tails" : "");  // not uselessly wide
    }
  }
}

TEST(Stats, TheIntervalIsNotTooWideToFindAnEffect) {
  // 8 pairs, 0.3% noise, a 1% effect: resolved, and the interval's half-width under 0.5%.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n(0, 0.003);
  std::vector<double> a, b;
  for (int i = 0; i < 8; ++i) {
    a.push_back(0.99 * (1 + n(rng)));
    b.push_back(1 + n(rng));
  }
  Interval i = ratio_interval(a, b, 1);
  EXPECT_LT(i.hi, 1);
  EXPECT_LT((i.hi - i.lo) / 2, 0.005);
  EXPECT_NEAR(i.mid, 0.99, 0.003);
}

TEST(Stats, NeedsTwoPairs) {
  EXPECT_THROW(ratio_interval({1}, {1}, 1), powershape::Error);
  EXPECT_THROW(ratio_interval({1, 2}, {1}, 1), powershape::Error);
}

}  // namespace powershape::experiment
