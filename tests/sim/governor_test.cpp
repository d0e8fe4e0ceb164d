#include "powershape/sim/governor.hpp"

#include <gtest/gtest.h>

#include "powershape/telemetry/signal.hpp"

namespace powershape::sim {
namespace {

namespace reason = telemetry::reason;

// A profile whose loops are easy to follow: a 1 ms window updated every 1 ms step.
Profile simple() {
  Profile p = load_profile("h200");
  p.window_ms = 1;
  p.update_ms = 1;
  p.gain_mhz_per_w_s = 10;          // 100 W over the limit: -1 MHz a step
  p.recovery_mhz_per_s = 500;       // +0.5 MHz a step at most
  p.thermal_gain_mhz_per_c_s = 20;  // 10 C over: -0.2 MHz a step
  p.medium_gain_mhz_per_w_s = 0;    // the slow loop alone, unless a test adds the medium one
  return p;
}

}  // namespace

TEST(Governor, UnderTheLimitItHoldsTheMaximumClock) {
  const Profile p = simple();
  Governor g(p, 1e-3, 0, 0);
  for (int i = 0; i < 100; ++i) g.observe(p.power_limit_w - 50, 40, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz);
  EXPECT_EQ(g.reasons(), 0u);
}

TEST(Governor, TheCapComesDownFromTheClockTheFastLimiterHolds) {
  const Profile p = simple();
  Governor g(p, 1e-3, 0, 0);
  // Over the limit while the fast limiter holds the clock 300 MHz under the maximum: the slow
  // cap starts from that clock, not from the maximum it was at (no wind-up).
  for (int i = 0; i < 10; ++i) g.observe(p.power_limit_w + 100, 40, p.max_mhz - 300);
  EXPECT_NEAR(g.target_mhz(), p.max_mhz - 300 - 10, 1e-9);
}

TEST(Governor, OverTheLimitTheCapFallsByGainTimesExcess) {
  const Profile p = simple();
  Governor g(p, 1e-3, 0, 0);
  for (int i = 0; i < 10; ++i) g.observe(p.power_limit_w + 100, 40, p.max_mhz);
  EXPECT_NEAR(g.target_mhz(), p.max_mhz - 10, 1e-9);
  EXPECT_TRUE(g.reasons() & reason::kSwPowerCap);
  // Back under the limit it recovers no faster than recovery_mhz_per_s.
  for (int i = 0; i < 4; ++i) g.observe(p.power_limit_w - 300, 40, p.max_mhz);
  EXPECT_NEAR(g.target_mhz(), p.max_mhz - 10 + 4 * 0.5, 1e-9);
  for (int i = 0; i < 100; ++i) g.observe(p.power_limit_w - 300, 40, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz);
  EXPECT_EQ(g.reasons(), 0u);
}

TEST(Governor, TheCapNeverLeavesTheClockRange) {
  const Profile p = simple();
  Governor g(p, 1e-3, 0, 0);
  for (int i = 0; i < 100000; ++i) g.observe(p.power_limit_w * 3, 40, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.min_mhz);
}

TEST(Governor, AveragesPowerOverItsWindow) {
  Profile p = simple();
  p.window_ms = 10;  // ten steps: a one-step spike of +1000 W averages to +100 W
  p.update_ms = 10;
  Governor g(p, 1e-3, 0, 0);
  g.observe(p.power_limit_w + 1000, 40, p.max_mhz);
  for (int i = 0; i < 9; ++i) g.observe(p.power_limit_w, 40, p.max_mhz);
  EXPECT_NEAR(g.target_mhz(), p.max_mhz - 10 * 100 * 0.01, 1e-9);
}

TEST(Governor, AMediumLoopActsOnItsOwnShorterWindow) {
  Profile p = simple();
  p.window_ms = 100;  // the slow loop sees a 10 ms excess diluted ten times
  p.update_ms = 10;
  p.gain_mhz_per_w_s = 10;
  Governor slow_only(p, 1e-3, 0, 0);
  p.medium_window_ms = 10;
  p.medium_gain_mhz_per_w_s = 100;
  p.medium_limit_w = p.power_limit_w + 50;  // 50 W over its own limit
  Governor both(p, 1e-3, 0, 0);
  for (Governor* g : {&slow_only, &both}) {
    for (int i = 0; i < 100; ++i) g->observe(p.power_limit_w, 40, p.max_mhz);  // at the limit
    for (int i = 0; i < 10; ++i) g->observe(p.power_limit_w + 100, 40, p.max_mhz);
  }
  // Slow: 10 MHz/W/s x (100 W x 10/100) x 10 ms = 1 MHz; medium: 100 x 50 W x 10 ms = 50 MHz.
  EXPECT_NEAR(slow_only.target_mhz(), p.max_mhz - 1, 1e-9);
  EXPECT_NEAR(both.target_mhz(), p.max_mhz - 50, 1e-9);
  // A user's limit scales the medium loop's: at half the limit it holds half its own.
  Governor halved(p, 1e-3, p.power_limit_w / 2, 0);
  for (int i = 0; i < 10; ++i) halved.observe((p.power_limit_w + 50) / 2 + 10, 40, p.max_mhz);
  EXPECT_NEAR(halved.target_mhz(), p.max_mhz - 100 * 10 * 0.01, 1e-9);
  EXPECT_TRUE(both.reasons() & reason::kSwPowerCap);
}

TEST(Governor, TheThermalLoopActsOnTemperature) {
  const Profile p = simple();
  Governor g(p, 1e-3, 0, 0);
  for (int i = 0; i < 10; ++i) g.observe(100, p.max_operating_c + 10, p.max_mhz);
  EXPECT_NEAR(g.target_mhz(), p.max_mhz - 2, 1e-9);
  EXPECT_TRUE(g.reasons() & reason::kSwThermal);
  EXPECT_FALSE(g.reasons() & reason::kSwPowerCap);
}

TEST(Governor, AUsersLimitAndCapApply) {
  const Profile p = simple();
  Governor g(p, 1e-3, 300, 1200);
  EXPECT_DOUBLE_EQ(g.power_limit_w(), 300);
  EXPECT_DOUBLE_EQ(g.target_mhz(), 1200);
  EXPECT_TRUE(g.reasons() & reason::kAppClocks);
  for (int i = 0; i < 10; ++i) g.observe(400, 40, p.max_mhz);  // 100 W over the user's 300 W
  EXPECT_TRUE(g.reasons() & reason::kSwPowerCap);
}

TEST(Governor, ASpikeLoopDropsFastAndRecoversSlowly) {
  Profile p = simple();
  p.spike_window_ms = 1;
  p.spike_limit_w = p.power_limit_w + 50;
  p.spike_gain_mhz_per_w_s = 100;   // 100 W over its limit: -10 MHz a step
  p.spike_recovery_mhz_per_s = 50;  // +0.05 MHz a step
  Governor g(p, 1e-3, 0, 0);
  for (int i = 0; i < 10; ++i) g.observe(p.power_limit_w + 150, 40, p.max_mhz);
  // The slow loop: 10 x 150 W x 1 ms = 1.5 MHz a step; the spike loop 10 MHz a step.
  EXPECT_NEAR(g.target_mhz(), p.max_mhz - 100, 1e-9);
  EXPECT_TRUE(g.reasons() & reason::kSwPowerCap);
  for (int i = 0; i < 20; ++i) g.observe(p.power_limit_w - 300, 40, p.max_mhz);
  // The slow loop is back within 20 x 0.5 MHz (at max - 5); the spike loop only 20 x 0.05 MHz.
  EXPECT_NEAR(g.target_mhz(), p.max_mhz - 99, 1e-9);
  for (int i = 0; i < 2000; ++i) g.observe(p.power_limit_w - 300, 40, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz);
  EXPECT_EQ(g.reasons(), 0u);
}

TEST(Governor, AThermalSlowdownStepsWithHysteresis) {
  Profile p = simple();
  p.thermal_gain_mhz_per_c_s = 0;  // the staircase alone
  p.slowdown_c = 80;
  p.slowdown_hysteresis_c = 5;
  p.slowdown_step_mhz = 100;
  p.slowdown_interval_ms = 10;  // 10 steps of 1 ms
  Governor g(p, 1e-3, 0, 0);
  for (int i = 0; i < 10; ++i) g.observe(100, 79.9, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz);
  // At 80 C from step 11: a step off then, at 21 and at 31.
  for (int i = 0; i < 25; ++i) g.observe(100, 80, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz - 300);
  EXPECT_TRUE(g.reasons() & reason::kSwThermal);
  // Between 75 and 80 C it holds.
  for (int i = 0; i < 50; ++i) g.observe(100, 77, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz - 300);
  // Under 75 C a step back an interval: at 91 and 101.
  for (int i = 0; i < 20; ++i) g.observe(100, 74.9, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz - 100);
  for (int i = 0; i < 10; ++i) g.observe(100, 74.9, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz);
  EXPECT_EQ(g.reasons(), 0u);
  // It never steps under the minimum clock.
  for (int i = 0; i < 100000; ++i) g.observe(100, 120, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.min_mhz);
}

TEST(Governor, ASupplyOverItsLimitHoldsTheDegradedClock) {
  Profile p = simple();
  p.supply_limit_w = 240;
  p.supply_rest_w = 60;
  p.supply_window_ms = 2;  // two steps
  p.supply_degraded_mhz = 700;
  p.supply_hold_s = 0.01;  // ten steps
  Governor g(p, 1e-3, 0, 0);
  g.observe(170, 40, p.max_mhz);  // the box at 230 W: (230 + 0) / 2 in the window
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz);
  g.observe(200, 40, p.max_mhz);  // (230 + 260) / 2 = 245 W > 240 W
  EXPECT_DOUBLE_EQ(g.target_mhz(), 700);
  EXPECT_TRUE(g.reasons() & reason::kHwPowerBrake);
  for (int i = 0; i < 9; ++i) g.observe(20, 40, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), 700);  // held, though the box draws 80 W
  g.observe(20, 40, p.max_mhz);
  EXPECT_DOUBLE_EQ(g.target_mhz(), p.max_mhz);
  EXPECT_EQ(g.reasons(), 0u);
}

}  // namespace powershape::sim
