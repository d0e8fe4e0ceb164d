#include "powershape/sim/mechanism_fit.hpp"

#include <gtest/gtest.h>

#include "powershape/sim/simulator.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::sim {
namespace {

// A bare Spark (no mechanism) to add one to, and a recording of it under an LM head.
Profile bare() {
  Profile p = load_profile("dgx-spark");
  p.slowdown_c = 0;
  p.thermal_gain_mhz_per_c_s = 400;
  return p;
}

// Idle and load in turn, `seconds` of each, three times, and idle to end: the device heats and
// cools.
trace::Trace record(const Profile& p, double seconds) {
  const auto plan = workload::lmhead_plan({8192, 896, 151936, true, 4, false}, 1);
  DeviceOptions o;
  o.step_s = 1e-3;
  SimDevice dev(p, o);
  for (int i = 0; i < 3; ++i) {
    dev.idle(seconds);
    dev.run(plan, 0, seconds);
  }
  dev.idle(seconds);
  return dev.trace();
}

}  // namespace

TEST(MechanismFit, AThermalSlowdownsThresholdStepAndHysteresis) {
  Profile truth = bare();
  truth.thermal_gain_mhz_per_c_s = 0;
  truth.tau_die_s = 2;
  truth.slowdown_c = 66;
  truth.slowdown_hysteresis_c = 8;
  truth.slowdown_step_mhz = 150;
  truth.slowdown_interval_ms = 200;
  const MechanismFit f = fit_mechanisms(bare(), record(truth, 60));
  // Within a clock step and a sensor update (100 ms) of the truth.
  EXPECT_NEAR(f.profile.slowdown_c, 66, 2);
  EXPECT_NEAR(f.profile.slowdown_step_mhz, 150, 15);
  EXPECT_NEAR(f.profile.slowdown_interval_ms, 200, 100);
  EXPECT_NEAR(f.profile.slowdown_hysteresis_c, 8, 3);
  EXPECT_EQ(f.profile.thermal_gain_mhz_per_c_s, 0);
  EXPECT_EQ(f.lines.front().rfind("thermal slowdown: sets in at", 0), 0u) << f.lines.front();
}

TEST(MechanismFit, AFansCurveAndLag) {
  Profile truth = bare();
  truth.fan_min_pct = 30;
  truth.fan_start_c = 45;
  truth.fan_full_c = 85;
  truth.fan_hysteresis_c = 0.5;
  truth.fan_tau_s = 5;
  truth.fan_r_sink_at_min_c_per_w = 2 * truth.r_sink_c_per_w;
  Profile start = bare();
  start.fan_r_sink_at_min_c_per_w = truth.fan_r_sink_at_min_c_per_w;
  const MechanismFit f = fit_mechanisms(start, record(truth, 60));
  EXPECT_NEAR(f.profile.fan_min_pct, 30, 1);
  EXPECT_NEAR(f.profile.fan_start_c, 45, 4);
  EXPECT_NEAR(f.profile.fan_full_c, 85, 4);
  EXPECT_GE(f.profile.fan_tau_s, 2);
  EXPECT_LE(f.profile.fan_tau_s, 12);
}

TEST(MechanismFit, ASpikeLoopsSlowRecovery) {
  Profile truth = bare();
  truth.spike_window_ms = 100;
  truth.spike_limit_w = 102;
  truth.spike_gain_mhz_per_w_s = 100;
  truth.spike_recovery_mhz_per_s = 50;
  truth.thermal_gain_mhz_per_c_s = 0;  // the spike loop alone moves the clock
  Profile start = truth;
  start.spike_recovery_mhz_per_s = 1000;
  const MechanismFit f = fit_mechanisms(start, record(truth, 30));
  EXPECT_NEAR(f.profile.spike_recovery_mhz_per_s, 50, 15);
  // Without a spike loop in the profile the rate is only reported.
  const MechanismFit g = fit_mechanisms(bare(), record(truth, 60));
  EXPECT_EQ(g.profile.spike_gain_mhz_per_w_s, 0);
  EXPECT_NE(g.lines[1].find("no spike loop in the profile"), std::string::npos) << g.lines[1];
}

TEST(MechanismFit, ASuppliesDegradedClock) {
  Profile truth = bare();
  truth.supply_limit_w = 240;
  truth.supply_rest_w = 150;
  truth.supply_window_ms = 10;
  truth.supply_degraded_mhz = 705;
  truth.supply_hold_s = 2;
  Profile start = truth;
  start.supply_degraded_mhz = 1000;
  start.supply_hold_s = 9;
  const MechanismFit f = fit_mechanisms(start, record(truth, 60));
  EXPECT_NEAR(f.profile.supply_degraded_mhz, 705, 15);
  EXPECT_EQ(f.profile.supply_hold_s, 9);  // holds that run into one say nothing of it
  EXPECT_NE(f.lines[3].find("hold_s, limit, rest and window kept"), std::string::npos);
}

TEST(MechanismFit, WhatARecordingDoesNotShowIsKeptAndSaid) {
  const Profile h = load_profile("h200");
  const MechanismFit f = fit_mechanisms(h, record(h, 10));
  EXPECT_EQ(f.profile.slowdown_c, 0);
  EXPECT_EQ(f.profile.fan_tau_s, 0);
  EXPECT_EQ(f.profile.supply_limit_w, 0);
  EXPECT_EQ(f.lines[0].rfind("thermal slowdown: not seen", 0), 0u) << f.lines[0];
  EXPECT_EQ(f.lines[2].rfind("fan: not read", 0), 0u) << f.lines[2];
  EXPECT_EQ(f.lines[3].rfind("supply: no HW power brake", 0), 0u) << f.lines[3];
  EXPECT_THROW(fit_mechanisms(h, trace::Trace{}), std::runtime_error);
}

}  // namespace powershape::sim
