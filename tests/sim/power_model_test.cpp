#include "powershape/sim/power_model.hpp"

#include <gtest/gtest.h>

namespace powershape::sim {

TEST(PowerModel, PowerRisesWithClockActivityAndTemperature) {
  Profile p = load_profile("h200");
  PowerModel m(p);
  EXPECT_LT(m.power_w(1000, 1, 0, 40), m.power_w(1980, 1, 0, 40));
  EXPECT_LT(m.power_w(1980, 0.2, 0, 40), m.power_w(1980, 1, 0, 40));
  EXPECT_LT(m.power_w(1980, 1, 0, 40), m.power_w(1980, 1, 0, 80));
  EXPECT_LT(m.power_w(1980, 0, 0, 40), m.power_w(1980, 0, 1, 40));
}

TEST(PowerModel, TheFastLimitClockIsTheHighestThatFits) {
  Profile p = load_profile("h200");
  PowerModel m(p);
  double f = m.max_clock_under(p.fast_limit_w, 1, 0.1, 45);
  EXPECT_LT(f, p.max_mhz);  // a big product at boost wants more than the fast limit
  EXPECT_LE(m.power_w(f, 1, 0.1, 45), p.fast_limit_w);
  // The inverse is tabulated to within 1 MHz (power_model.cpp): two more no longer fit.
  EXPECT_GT(m.power_w(f + 2, 1, 0.1, 45), p.fast_limit_w);
  EXPECT_EQ(m.max_clock_under(p.fast_limit_w, 0.02, 0, 45), p.max_mhz);  // idle fits at boost
  EXPECT_EQ(m.max_clock_under(1, 1, 0, 45), p.min_mhz);                  // nothing fits: floor
}

}  // namespace powershape::sim
