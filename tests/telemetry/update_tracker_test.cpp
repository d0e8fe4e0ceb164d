#include "powershape/telemetry/update_tracker.hpp"

#include <gtest/gtest.h>

namespace powershape::telemetry {

TEST(UpdateTracker, LearnsTheMedianPeriodOfChanges) {
  UpdateTracker u;
  EXPECT_FALSE(u.median_period_ns());
  // Polled every 1 ms, the value changes every 100 ms (one change 120 ms late).
  int64_t value = 0;
  for (int64_t t = 0; t <= 1'000; ++t) {
    if (t % 100 == 0 && t != 500) ++value;
    if (t == 520) ++value;
    u.feed(t * 1'000'000, value);
  }
  ASSERT_TRUE(u.median_period_ns());
  EXPECT_EQ(*u.median_period_ns(), 100'000'000);
  EXPECT_EQ(u.changes(), 10u);
}

}  // namespace powershape::telemetry
