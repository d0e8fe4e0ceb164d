#include "powershape/exporter/prometheus.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

namespace powershape::exporter {

using telemetry::Reading;
using telemetry::Signal;

// dcgm-exporter's names and labels, in W / mJ / MHz / C; every sample line parses; each family's
// samples follow its one TYPE line; label values are escaped.
TEST(Prometheus, DcgmNamesValidLinesAndGroupedFamilies) {
  trace::Trace t;
  telemetry::DeviceInfo d;
  d.index = 0;
  d.name = "NVIDIA \"H200\"";
  d.uuid = "GPU-1";
  t.devices.push_back(d);
  for (int i = 0; i < 3; ++i) {
    trace::Sample s;
    s.t_ns = int64_t{i} * 100'000'000;
    s[Signal::kPowerUsage] = Reading::of(600'000 + i * 1000);
    s[Signal::kEnergy] = Reading::of(1000 + i * 60'000);
    s[Signal::kSmClock] = Reading::of(1500);
    s[Signal::kReasons] = Reading::of(telemetry::reason::kSwPowerCap);
    t.samples.push_back(s);
  }
  t.regions.push_back({"step \"a\"", -1, 0, 200'000'000});
  const std::string text = prometheus_text(t, 0, 200'000'000);
  EXPECT_NE(text.find("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA "
                      "\\\"H200\\\"\"} 602\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-1\",modelName="
                      "\"NVIDIA \\\"H200\\\"\"} 121000\n"),
            std::string::npos);
  EXPECT_NE(text.find("clock_event=\"sw_power_cap\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("region=\"step \\\"a\\\"\"}"), std::string::npos);
  const std::regex sample(
      R"re(^[a-zA-Z_:][a-zA-Z0-9_:]*\{([a-zA-Z_]+="([^"\\]|\\.)*",?)*\} -?[0-9.e+-]+$)re");
  std::istringstream lines(text);
  std::string line, current;
  std::set<std::string> typed;
  while (std::getline(lines, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      current = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(typed.insert(current).second) << "two TYPE lines for " << current;
      continue;
    }
    if (line.rfind("# HELP ", 0) == 0) continue;
    EXPECT_TRUE(std::regex_match(line, sample)) << line;
    EXPECT_EQ(line.substr(0, line.find('{')), current) << "a sample away from its family: " << line;
  }
}

}  // namespace powershape::exporter
