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

}  // namespace powershape::telemetry
