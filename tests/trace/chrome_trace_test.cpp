#include "powershape/trace/chrome_trace.hpp"

#include <gtest/gtest.h>

namespace powershape::trace {

using telemetry::Reading;
using telemetry::Signal;

// Counters per GPU and signal in W / J / MHz, regions as slices, events as instants, all on the
// wall clock when the trace has its anchor.
TEST(ChromeTrace, CountersRegionsAndEventsOnTheWallClock) {
  Trace t;
  t.source = "nvml";
  telemetry::DeviceInfo d;
  d.index = 0;
  d.name = "NVIDIA H200";
  t.devices.push_back(d);
  Sample s;
  s.gpu = 0;
  s.t_ns = 2'000'000;
  s[Signal::kPowerUsage] = Reading::of(650'000);
  s[Signal::kEnergy] = Reading::of(1'500);
  s[Signal::kSmClock] = Reading::of(1980);
  t.samples.push_back(s);
  t.regions.push_back({"step", -1, 1'000'000, 4'000'000});
  t.events.push_back({3'000'000, 0, "energy counter went back; continued"});
  t.wall_minus_steady_ns = 1'700'000'000'000'000'000;
  const auto j = to_chrome_trace(t);
  const double base = 1'700'000'000'000'000'000 * 1e-3;
  int counters = 0;
  for (const auto& e : j.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "C") {
      ++counters;
      EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), base + 2000);
      if (e.at("name") == "power_usage [W]") {
        EXPECT_DOUBLE_EQ(e.at("args").at("value").get<double>(), 650);
      }
      if (e.at("name") == "energy [J]") {
        EXPECT_DOUBLE_EQ(e.at("args").at("value").get<double>(), 1.5);
      }
      if (e.at("name") == "sm_clock [MHz]") {
        EXPECT_DOUBLE_EQ(e.at("args").at("value").get<double>(), 1980);
      }
    }
    if (ph == "X") {
      EXPECT_EQ(e.at("name"), "step");
      EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), 3000);
      EXPECT_DOUBLE_EQ(e.at("ts").get<double>(), base + 1000);
    }
    if (ph == "i") {
      EXPECT_EQ(e.at("pid"), 0);
    }
    if (ph == "M" && e.at("pid") == 0) {
      EXPECT_EQ(e.at("args").at("name"), "GPU 0: NVIDIA H200");
    }
  }
  EXPECT_EQ(counters, 3);
  EXPECT_TRUE(j.at("otherData").at("wall_clock").get<bool>());
}

}  // namespace powershape::trace
