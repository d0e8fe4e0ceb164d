#include "powershape/telemetry/counter_unwrap.hpp"

#include <gtest/gtest.h>

namespace powershape::telemetry {

TEST(CounterUnwrap, KeepsTheDriverCountAndAddsDeltas) {
  CounterUnwrap u;
  EXPECT_EQ(u.feed(1000).value, 1000);
  EXPECT_EQ(u.feed(1500).value, 1500);
  EXPECT_FALSE(u.feed(1500).went_back);
}

TEST(CounterUnwrap, A64BitWrapContinuesTheCount) {
  CounterUnwrap u;
  const uint64_t top = ~uint64_t{0};
  EXPECT_EQ(u.feed(top - 100).value, 0);  // starts near the top: counts from 0
  auto s = u.feed(49);                    // 150 on: 100 to the top, 1 to wrap, 49 after
  EXPECT_TRUE(s.went_back);
  EXPECT_EQ(s.value, 150);
}

TEST(CounterUnwrap, AResetCountsOnFromTheNewValue) {
  CounterUnwrap u;
  u.feed(5000);
  auto s = u.feed(200);  // driver reloaded: the counter restarted from 0
  EXPECT_TRUE(s.went_back);
  EXPECT_EQ(s.value, 5200);
  EXPECT_EQ(u.feed(300).value, 5300);
}

// A driver's counter that steps back by a little now and then is noise, not a reset: the value
// holds, and counting resumes only past the earlier high (no energy is counted twice).
TEST(CounterUnwrap, ASmallStepBackIsHeldNotAReset) {
  CounterUnwrap u;
  u.feed(5'000'000);
  auto s = u.feed(4'999'999);
  EXPECT_FALSE(s.went_back);
  EXPECT_EQ(s.value, 5'000'000);
  EXPECT_EQ(u.feed(4'999'990).value, 5'000'000);
  EXPECT_EQ(u.feed(5'000'010).value, 5'000'010);
  EXPECT_TRUE(u.feed(2'000'000).went_back);  // below half: a reset
}

}  // namespace powershape::telemetry
