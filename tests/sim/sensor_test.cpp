#include "powershape/sim/sensor.hpp"

#include <gtest/gtest.h>

namespace powershape::sim {
using telemetry::Signal;

namespace {

// 1 ms steps; readings every 10 ms, power usage over 30 ms, driver samples every 5 ms.
Profile simple() {
  Profile p = load_profile("h200");
  p.sensor_update_ms = 10;
  p.usage_window_ms = 30;
  p.driver_sample_ms = 5;
  p.clock_step_mhz = 15;
  return p;
}

}  // namespace

TEST(Sensor, ReportsWhatNvmlWouldAtItsUpdatePeriod) {
  const Profile p = simple();
  Sensor s(p, 1e-3, 1, 0.0);
  int updates = 0;
  // 10 steps at 100 W, 10 at 300 W, 10 at 500 W.
  for (int i = 0; i < 30; ++i) {
    const double w = 100.0 + 200.0 * (i / 10);
    // Kernels run through the first 15 steps, half of their time at full bandwidth.
    if (s.step(int64_t{i + 1} * 1'000'000, w, i < 15 ? 1 : 0, i < 15 ? 0.5 : 0)) {
      ++updates;
      s.report(int64_t{i + 1} * 1'000'000, 1987, 55.4, 4);
    }
  }
  EXPECT_EQ(updates, 3);
  std::vector<telemetry::Sample> polls, driver;
  for (const auto& r : s.rows()) (r[Signal::kDriverPower].ok() ? driver : polls).push_back(r);
  ASSERT_EQ(polls.size(), 3u);
  ASSERT_EQ(driver.size(), 6u);                               // every 5 ms
  EXPECT_EQ(driver[2][Signal::kDriverPower].value, 300'000);  // mW, the mean over its 5 ms
  const auto& last = polls.back();
  EXPECT_EQ(last[Signal::kPowerInstant].value, 500'000);  // the mean over the last update
  EXPECT_EQ(last[Signal::kPowerUsage].value, 300'000);    // the mean over the 30 ms window
  EXPECT_EQ(last[Signal::kEnergy].value, 9'000);          // mJ: 10 ms x (100 + 300 + 500) W
  EXPECT_EQ(last[Signal::kSmClock].value, 1980);          // floored to 15 MHz steps
  EXPECT_EQ(last[Signal::kGpuTemp].value, 55);
  EXPECT_EQ(last[Signal::kReasons].value, 4);
  EXPECT_EQ(last[Signal::kMemClock].status, telemetry::Status::kNotSupported);
  // Utilisation over each update period, as NVML's rates: busy 10/10, 5/10, 0/10 of the steps.
  EXPECT_EQ(polls[0][Signal::kUtilGpu].value, 100);
  EXPECT_EQ(polls[0][Signal::kUtilMem].value, 50);
  EXPECT_EQ(polls[1][Signal::kUtilGpu].value, 50);
  EXPECT_EQ(polls[1][Signal::kUtilMem].value, 25);
  EXPECT_EQ(last[Signal::kUtilGpu].value, 0);
  EXPECT_EQ(last[Signal::kUtilMem].value, 0);
}

TEST(Sensor, NoiseIsSeededAndSmall) {
  const Profile p = simple();
  Sensor a(p, 1e-3, 7, 0.01), b(p, 1e-3, 7, 0.01);
  for (int i = 1; i <= 1000; ++i) {
    if (a.step(i * 1'000'000LL, 400, 1, 0)) a.report(i * 1'000'000LL, 1980, 50, 0);
    if (b.step(i * 1'000'000LL, 400, 1, 0)) b.report(i * 1'000'000LL, 1980, 50, 0);
  }
  ASSERT_EQ(a.rows().size(), b.rows().size());
  for (std::size_t i = 0; i < a.rows().size(); ++i) {
    EXPECT_EQ(a.rows()[i].readings, b.rows()[i].readings);
    for (Signal sig : {Signal::kPowerInstant, Signal::kDriverPower}) {
      if (a.rows()[i][sig].ok()) {
        EXPECT_NEAR(static_cast<double>(a.rows()[i][sig].value), 400'000, 400'000 * 0.05);
      }
    }
  }
  EXPECT_EQ(a.rows().back()[Signal::kEnergy].value, 400'000);  // the counter carries no noise
}

}  // namespace powershape::sim
