#include "powershape/sim/fan.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "powershape/sim/simulator.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::sim {
namespace {

Profile with_fan() {
  Profile p = load_profile("dgx-spark");
  p.fan_min_pct = 20;
  p.fan_start_c = 40;
  p.fan_full_c = 80;
  p.fan_hysteresis_c = 5;
  p.fan_tau_s = 1;
  p.r_sink_c_per_w = 0.2;
  p.fan_r_sink_at_min_c_per_w = 0.5;
  return p;
}

}  // namespace

TEST(Fan, FollowsItsCurveWithALag) {
  const Profile p = with_fan();
  Fan f(p, 30);
  EXPECT_DOUBLE_EQ(f.pct(), 20);  // at rest under start_c
  f.step(60, 1.0);                // the target jumps to 20 + 80 x (60 - 40) / 40 = 60%
  EXPECT_DOUBLE_EQ(f.target_pct(), 60);
  EXPECT_NEAR(f.pct(), 60 - 40 * std::exp(-1.0), 1e-12);  // one time constant on
  for (int i = 0; i < 50; ++i) f.step(60, 1.0);
  EXPECT_NEAR(f.pct(), 60, 1e-9);
}

TEST(Fan, FallsOnlyPastItsHysteresis) {
  const Profile p = with_fan();
  Fan f(p, 60);
  EXPECT_DOUBLE_EQ(f.target_pct(), 60);
  f.step(56, 0.1);  // within 5 C of 60: the target holds
  EXPECT_DOUBLE_EQ(f.target_pct(), 60);
  f.step(50, 0.1);  // 10 C under: the target follows 55 C
  EXPECT_DOUBLE_EQ(f.target_pct(), 50);
  f.step(52, 0.1);  // rising again within the play: holds at 55 C's
  EXPECT_DOUBLE_EQ(f.target_pct(), 50);
  f.step(90, 0.1);  // past full_c: 100%
  EXPECT_DOUBLE_EQ(f.target_pct(), 100);
}

TEST(Fan, TheSinksResistanceFollowsTheSpeed) {
  const Profile p = with_fan();
  Fan f(p, 30);
  EXPECT_DOUBLE_EQ(f.r_sink_c_per_w(), 0.5);
  for (int i = 0; i < 100; ++i) f.step(100, 1.0);
  EXPECT_NEAR(f.r_sink_c_per_w(), 0.2, 1e-9);
  Fan half(p, 60);  // 60%: halfway from 20% to 100%, conductance halfway from 2 to 5 W/C
  EXPECT_NEAR(half.r_sink_c_per_w(), 1 / 3.5, 1e-12);
}

TEST(Fan, TheSimulatedDeviceReportsItsFanAndRunsCoolerForIt) {
  Profile fan = with_fan();
  Profile still = fan;  // the same sink held at the fan's slowest
  still.fan_tau_s = 0;
  still.r_sink_c_per_w = fan.fan_r_sink_at_min_c_per_w;
  workload::Workload w{workload::Msm{4096, 512, 4096}, 1};
  const auto plan = workload::make_plan(w, {});
  SimOptions o;
  o.step_s = 1e-3;
  o.seconds = 60;
  const SimResult a = simulate(fan, plan, o), b = simulate(still, plan, o);
  EXPECT_LT(a.end_temp_c, b.end_temp_c - 1);
  const auto& rows = a.trace.samples;
  int64_t first = -1, last = -1;
  for (const auto& r : rows) {
    const auto& v = r[telemetry::Signal::kFanSpeed];
    if (!v.ok()) continue;
    if (first < 0) first = v.value;
    last = v.value;
  }
  EXPECT_EQ(first, 20);
  EXPECT_GT(last, 30);
  EXPECT_EQ(b.trace.devices[0].support[static_cast<std::size_t>(telemetry::Signal::kFanSpeed)],
            telemetry::Status::kNotSupported);
}

}  // namespace powershape::sim
