// On a real GPU: the driver answers through our declarations with plausible values. Skips where
// there is no driver.
#include <gtest/gtest.h>

#include <thread>

#include "powershape/telemetry/nvml_source.hpp"

namespace powershape::telemetry {

TEST(NvmlSourceGpu, ReadsPlausibleValuesFromTheRealDriver) {
  std::unique_ptr<NvmlSource> src;
  try {
    src = std::make_unique<NvmlSource>();
  } catch (const std::runtime_error& e) {
    GTEST_SKIP() << e.what();
  }
  const DeviceInfo& d = src->devices().at(0);
  EXPECT_FALSE(d.name.empty());
  EXPECT_EQ(d.uuid.rfind("GPU-", 0), 0u);
  ASSERT_TRUE(d.power_limit_mw.ok());
  EXPECT_GT(d.power_limit_mw.value, 50'000);
  ASSERT_TRUE(d.max_sm_clock_mhz.ok());
  EXPECT_GT(d.max_sm_clock_mhz.value, 500);
  Sample s = src->poll(0, all_signals());
  ASSERT_TRUE(s[Signal::kPowerUsage].ok());
  EXPECT_GT(s[Signal::kPowerUsage].value, 10'000);
  EXPECT_LT(s[Signal::kPowerUsage].value, 2'000'000);
  ASSERT_TRUE(s[Signal::kSmClock].ok());
  EXPECT_LE(s[Signal::kSmClock].value, d.max_sm_clock_mhz.value);
  ASSERT_TRUE(s[Signal::kEnergy].ok());
  ASSERT_TRUE(s[Signal::kGpuTemp].ok());
  EXPECT_GT(s[Signal::kGpuTemp].value, 5);
  EXPECT_LT(s[Signal::kGpuTemp].value, 100);
  if (s[Signal::kPowerInstant].ok()) {
    EXPECT_GT(s[Signal::kPowerInstant].value, 10'000);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_GE(src->poll(0, all_signals())[Signal::kEnergy].value, s[Signal::kEnergy].value);
  if (d.support[static_cast<std::size_t>(Signal::kDriverPower)] == Status::kOk) {
    auto rows = src->drain(0);
    EXPECT_FALSE(rows.empty());
    for (const auto& r : rows) EXPECT_GT(r[Signal::kDriverPower].value, 10'000);
  }
}

}  // namespace powershape::telemetry
