#include "powershape/telemetry/counter_unwrap.hpp"

#include <gtest/gtest.h>

namespace powershape::telemetry {

TEST(CounterUnwrap, KeepsTheDriverCountAndAddsDeltas) {
  CounterUnwrap u;
  EXPECT_EQ(u.feed(1000, 0).value, 1000);
  EXPECT_EQ(u.feed(1500, 0).value, 1500);
  EXPECT_FALSE(u.feed(1500, 0).went_back);
}

TEST(CounterUnwrap, A64BitWrapContinuesTheCount) {
  CounterUnwrap u;
  const uint64_t top = ~uint64_t{0};
  EXPECT_EQ(u.feed(top - 100, 0).value, 0);  // starts near the top: counts from 0
  auto s = u.feed(49, 0);                    // 150 on: 100 to the top, 1 to wrap, 49 after
  EXPECT_TRUE(s.went_back);
  EXPECT_EQ(s.value, 150);
}

TEST(CounterUnwrap, AResetCountsOnFromTheNewValue) {
  CounterUnwrap u;
  u.feed(5000, 0);
  auto s = u.feed(200, 0);  // driver reloaded: the counter restarted from 0
  EXPECT_TRUE(s.went_back);
  EXPECT_EQ(s.value, 5200);
  EXPECT_EQ(u.feed(300, 0).value, 5300);
}

// A driver's counter that steps back by a little now and then is noise, not a reset: the value
// holds, and counting resumes only past the earlier high (no energy is counted twice).
TEST(CounterUnwrap, ASmallStepBackIsHeldNotAReset) {
  CounterUnwrap u;
  u.feed(5'000'000, 0);
  auto s = u.feed(4'999'999, 0);
  EXPECT_FALSE(s.went_back);
  EXPECT_EQ(s.value, 5'000'000);
  EXPECT_EQ(u.feed(4'999'990, 0).value, 5'000'000);
  EXPECT_EQ(u.feed(5'000'010, 0).value, 5'000'010);
  EXPECT_TRUE(u.feed(2'000'000, 0).went_back);  // below half: a reset
}

// A counter that leaps (a driver glitch, a corrupt file) would make a derived power of petawatts:
// a step beyond the rate allowed over the time since the last reading, plus one second for
// counters that update in lumps, is left out and counting goes on from the new value.
TEST(CounterUnwrap, AStepFasterThanTheMostRateIsLeftOut) {
  CounterUnwrap u(10'000);  // 10 W in mJ/s
  u.feed(1'000, 0);
  auto s = u.feed(21'000, 1'000'000'000);  // 20 J in 1 s: the allowance is 10 W x 2 s
  EXPECT_EQ(s.value, 21'000);
  EXPECT_EQ(s.jumped, 0u);
  s = u.feed(uint64_t{1} << 60, 1'001'000'000);
  EXPECT_EQ(s.jumped, (uint64_t{1} << 60) - 21'000);
  EXPECT_EQ(s.value, 21'000);
  EXPECT_FALSE(s.went_back);
  EXPECT_EQ(u.feed((uint64_t{1} << 60) + 500, 1'002'000'000).value, 21'500);
}

// The wrap of a counter that starts high can be a leap too: modulo 2^64 it is counted only if it
// fits the rate.
TEST(CounterUnwrap, AWrapBeyondTheRateIsLeftOut) {
  CounterUnwrap u(10'000);
  const uint64_t top = ~uint64_t{0};
  u.feed(top - 100, 0);
  auto s = u.feed(uint64_t{1} << 62, 1'000'000);
  EXPECT_TRUE(s.went_back);
  EXPECT_GT(s.jumped, 0u);
  EXPECT_EQ(s.value, 0);
}

}  // namespace powershape::telemetry
