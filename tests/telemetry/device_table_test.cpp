#include "powershape/telemetry/device_table.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "printed.hpp"

namespace powershape::telemetry {

// A reading is shown in its unit, a missing one by its status as nvidia-smi writes it; the
// signals split into those supported and those not.
TEST(DeviceTable, ReadingsInTheirUnitsAndStatusesAsNvidiaSmiWritesThem) {
  DeviceInfo d;
  d.index = 1;
  d.name = "NVIDIA H200";
  d.power_limit_mw = Reading::of(700000);
  d.max_sm_clock_mhz = Reading::of(1980);
  d.temp_slowdown_c = Reading::failed(Status::kNotSupported);
  d.support.fill(Status::kNotSupported);
  d.support[static_cast<std::size_t>(Signal::kPowerUsage)] = Status::kOk;
  const std::string s = testing::printed([&](std::FILE* f) { print_device(f, d); });
  EXPECT_EQ(s.rfind("GPU 1: NVIDIA H200\n", 0), 0u) << s;
  EXPECT_NE(s.find("power limit     700 W"), std::string::npos) << s;
  EXPECT_NE(s.find("SM 1980 MHz"), std::string::npos) << s;
  EXPECT_NE(s.find("slowdown [Not Supported]"), std::string::npos) << s;
  EXPECT_NE(s.find("  signals         " + std::string(signal_specs()[0].name)), std::string::npos)
      << s;
  EXPECT_NE(s.find("  not supported   "), std::string::npos) << s;
}

}  // namespace powershape::telemetry
