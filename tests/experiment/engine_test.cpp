#include "powershape/experiment/engine.hpp"

#include <gtest/gtest.h>

#include <random>

#include "experiment/fake_backend.hpp"
#include "powershape/util/error.hpp"

namespace powershape::experiment {

TEST(Engine, RunsEveryConfigurationOncePerRoundInShuffledOrders) {
  FakeBackend b({1, 1, 1, 1}, 0.001, 1);
  Design d;
  d.rounds = 6;
  auto r = run_design(b, d);
  ASSERT_EQ(r.measurements.size(), 24u);
  std::vector<std::vector<std::size_t>> rounds(6);
  for (const auto& m : r.measurements)
    rounds[static_cast<std::size_t>(m.round)].push_back(m.config);
  int distinct_orders = 0;
  for (int i = 0; i < 6; ++i) {
    auto sorted = rounds[static_cast<std::size_t>(i)];
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<std::size_t>{0, 1, 2, 3}));
    if (i > 0 && rounds[static_cast<std::size_t>(i)] != rounds[0]) ++distinct_orders;
  }
  EXPECT_GE(distinct_orders, 3);
}

// Rotated: each configuration in each place once over n rounds; two alternate which goes first.
TEST(Engine, RotatedRoundsPutEachConfigurationInEachPlace) {
  FakeBackend b({1, 1, 1}, 0.001, 1);
  Design d;
  d.rounds = 3;
  d.rotate = true;
  d.warmup_max_s = 0;
  auto r = run_design(b, d);
  std::vector<std::size_t> order;
  for (const auto& m : r.measurements) order.push_back(m.config);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 1, 2, 0, 2, 0, 1}));
  FakeBackend two({1, 1}, 0.001, 1);
  d.rounds = 4;
  order.clear();
  for (const auto& m : run_design(two, d).measurements) order.push_back(m.config);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 1, 0, 0, 1, 1, 0}));
}

TEST(Engine, WarmsUpUntilTheTelemetrySettles) {
  FakeBackend b({1, 1}, 0.001, 1, 6);
  Design d;
  auto r = run_design(b, d);
  EXPECT_TRUE(r.settled);
  EXPECT_EQ(r.warmup.size(), 8u);  // settles at the 6th window, and needs 3 agreeing windows
  FakeBackend never({1, 1}, 0.001, 1, 1000);
  d.warmup_max_s = 5;
  auto n = run_design(never, d);
  EXPECT_FALSE(n.settled);
  EXPECT_EQ(n.warmup.size(), 10u);
}

TEST(Engine, AClockThatWandersWithoutDriftingHasSettled) {
  FakeBackend b({1, 1}, 0.001, 1, 6, 0.02);  // +-2% from window to window once settled
  Design d;
  auto r = run_design(b, d);
  EXPECT_TRUE(r.settled);
  EXPECT_LE(r.warmup.size(), 12u);  // the 6 windows after it settles, at most a few more
  EXPECT_GE(r.warmup.size(), 11u);  // not before: the windows before it were drifting
}

TEST(Engine, WarmUpWindowsHoldFiveIterations) {
  FakeBackend b({1, 1}, 0.001, 1, 6);  // 10 ms iterations
  Design d;
  d.warmup_window_s = 0.01;
  auto r = run_design(b, d);
  ASSERT_GE(r.warmup.size(), 2u);
  EXPECT_DOUBLE_EQ(r.warmup[0].seconds, 0.01);
  EXPECT_NEAR(r.warmup[1].seconds, 0.05, 1e-3);
}

TEST(Engine, FindsAOnePercentEffectWithEightRounds) {
  FakeBackend b({1.0, 0.99}, 0.002, 7);
  auto r = run_design(b, Design{});
  const auto& c = r.configs[1];
  EXPECT_EQ(c.time_verdict, "faster");
  EXPECT_EQ(c.energy_verdict, "less energy");
  EXPECT_NEAR(c.time_ratio.mid, 0.99, 0.003);
  EXPECT_LE((c.time_ratio.hi - c.time_ratio.lo) / 2, 0.005);  // half-width 0.5% or less
  EXPECT_EQ(r.best_time, 1u);
}

TEST(Engine, CallsAResolvedDifferenceUnderTheMinimumEffectWithin) {
  FakeBackend b({1.0, 0.999}, 0.00001, 3);  // 0.1% faster, resolved: the interval excludes 1
  auto r = run_design(b, Design{});
  EXPECT_LT(r.configs[1].time_ratio.hi, 1);
  EXPECT_EQ(r.configs[1].time_verdict, "within 0.2%");
  FakeBackend b2({1.0, 0.999}, 0.00001, 3);
  Design d;
  d.min_effect = 0;
  EXPECT_EQ(run_design(b2, d).configs[1].time_verdict, "faster");
  d.min_effect = 1;
  EXPECT_THROW(run_design(b2, d), powershape::Error);
}

TEST(Engine, NamesTheBaselineBestWhenNothingBeatsItClearly) {
  FakeBackend b({1.0, 0.999, 1.0}, 0.00001,
                3);  // c1 0.1% faster: resolved, under the minimum effect
  Design d;
  d.baseline = 2;
  auto r = run_design(b, d);
  EXPECT_LT(r.configs[1].ms_per_iteration, r.configs[2].ms_per_iteration);
  EXPECT_EQ(r.best_time, 2u);
  EXPECT_EQ(r.best_energy, 2u);
  FakeBackend b2({1.0, 0.999, 1.0}, 0.00001, 3);
  d.min_effect = 0;
  EXPECT_EQ(run_design(b2, d).best_time, 1u);
}

TEST(Engine, HoldsANullEffectInItsIntervalAtTheDefaultRounds) {
  int held = 0, called = 0;
  const int seeds = 200;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    FakeBackend b({1.0, 1.0}, 0.003, seed);
    Design d;
    d.seed = seed;
    const auto c = run_design(b, d).configs[1];
    if (!c.time_ratio.excludes(1)) ++held;
    if (c.time_verdict != "no difference") ++called;
  }
  EXPECT_GE(held, seeds * 9 / 10);  // 95% expected
  EXPECT_EQ(held + called, seeds);  // a verdict only where the interval excludes 1
}

TEST(Engine, RejectsADesignItCannotRun) {
  FakeBackend b({1.0}, 0.001, 1);
  Design d;
  d.rounds = 1;
  EXPECT_THROW(run_design(b, d), powershape::Error);
  d.rounds = 4;
  d.baseline = 3;
  EXPECT_THROW(run_design(b, d), powershape::Error);
}

}  // namespace powershape::experiment
