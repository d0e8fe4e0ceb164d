#include "powershape/sim/thermal.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace powershape::sim {

TEST(Thermal, SettlesAtAmbientPlusPowerTimesResistanceWithItsTimeConstants) {
  Profile p = load_profile("h200");
  p.r_die_c_per_w = 0.02;
  p.tau_die_s = 1;
  p.r_sink_c_per_w = 0;  // one stage: an exact exponential
  p.tau_sink_s = 10;
  Thermal t(p);
  EXPECT_DOUBLE_EQ(t.die_c(), p.ambient_c);
  for (int i = 0; i < 1000; ++i) t.step(500, 1e-3);  // one time constant
  EXPECT_NEAR(t.die_c() - p.ambient_c, 10 * (1 - std::exp(-1.0)), 1e-6);
  for (int i = 0; i < 20000; ++i) t.step(500, 1e-3);
  EXPECT_NEAR(t.die_c() - p.ambient_c, 10, 1e-6);
}

}  // namespace powershape::sim
