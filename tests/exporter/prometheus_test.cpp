#include "powershape/exporter/prometheus.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
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
  d.power_limit_mw = Reading::of(700'000);
  d.enforced_power_limit_mw = Reading::of(550'000);
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
  const std::string text = prometheus_text(t, 0, 200'000'000, nullptr, "node-1");
  EXPECT_NE(text.find("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\",device=\"nvidia0\","
                      "modelName=\"NVIDIA \\\"H200\\\"\",Hostname=\"node-1\"} 602\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-1\",device="
                "\"nvidia0\",modelName=\"NVIDIA \\\"H200\\\"\",Hostname=\"node-1\"} 121000\n"),
      std::string::npos);
  EXPECT_NE(text.find("clock_event=\"sw_power_cap\"} 1\n"), std::string::npos);
  // The limits beside the power (dcgm-exporter#719): set, and enforced (the least of all set).
  EXPECT_NE(text.find("DCGM_FI_DEV_POWER_MGMT_LIMIT{gpu=\"0\",UUID=\"GPU-1\""), std::string::npos);
  EXPECT_NE(text.find("Hostname=\"node-1\"} 700\n"), std::string::npos);
  EXPECT_NE(text.find("DCGM_FI_DEV_ENFORCED_POWER_LIMIT{gpu=\"0\""), std::string::npos);
  EXPECT_NE(text.find("Hostname=\"node-1\"} 550\n"), std::string::npos);
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

// 5000 region names over a minute of 10 ms samples: the series are bounded to the names that
// ended last, the rest counted, and rendering stays cheap.
TEST(Prometheus, RegionSeriesAreBounded) {
  trace::Trace t;
  t.devices.resize(1);
  for (int i = 0; i < 6000; ++i) {
    trace::Sample s;
    s.t_ns = int64_t{i} * 10'000'000;
    s[Signal::kPowerUsage] = Reading::of(600'000);
    s[Signal::kEnergy] = Reading::of(int64_t{i} * 6000);
    t.samples.push_back(s);
  }
  for (int i = 0; i < 5000; ++i)
    t.regions.push_back({"r" + std::to_string(i), -1, int64_t{i} * 12'000'000,
                         int64_t{i} * 12'000'000 + 10'000'000});
  std::size_t left_out = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string text = prometheus_text(t, 0, 60'000'000'000, &left_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(left_out, 5000 - kMaxRegionNames);
  std::size_t series = 0;
  for (std::size_t at = text.find("powershape_region_seconds{"); at != std::string::npos;
       at = text.find("powershape_region_seconds{", at + 1))
    ++series;
  EXPECT_EQ(series, kMaxRegionNames);
  EXPECT_NE(text.find("region=\"r4999\""), std::string::npos);  // the newest kept
  EXPECT_EQ(text.find("region=\"r0\""), std::string::npos);     // the oldest dropped
}

// A node of 8 GPUs: each GPU's series with its own labels, and the node's totals beside them.
// What NVIDIA's dcgm-exporter Grafana dashboard (grafana/dcgm-exporter-dashboard.json, id 12239)
// queries, selecting by gpu and Prometheus' instance and naming series by gpu and Hostname: each
// of its metrics that NVML can give is here with those labels; DCGM_FI_DEV_FB_USED and
// DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (DCGM's profiling counters) are not (docs/prometheus.md).
TEST(Prometheus, ANodeOfEightGpusHasTheDashboardsSeriesAndItsTotals) {
  trace::Trace t;
  for (int g = 0; g < 8; ++g) {
    telemetry::DeviceInfo d;
    d.index = g;
    d.name = "NVIDIA H200";
    d.uuid = "GPU-" + std::to_string(g);
    t.devices.push_back(d);
    trace::Sample s;
    s.gpu = g;
    s.t_ns = 100'000'000;
    s[Signal::kPowerUsage] = Reading::of(500'000 + g * 10'000);
    s[Signal::kEnergy] = Reading::of(1'000'000);
    s[Signal::kSmClock] = Reading::of(1700);
    s[Signal::kGpuTemp] = Reading::of(50 + g);
    s[Signal::kUtilGpu] = Reading::of(90);
    t.samples.push_back(s);
  }
  const std::string text = prometheus_text(t, 0, 200'000'000, nullptr, "dgx-7");
  for (const char* metric : {"DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
                             "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_GPU_UTIL"}) {
    for (int g = 0; g < 8; ++g) {
      const std::regex series(std::string("(^|\n)") + metric + "\\{gpu=\"" + std::to_string(g) +
                              "\",[^}]*Hostname=\"dgx-7\"\\} ");
      EXPECT_TRUE(std::regex_search(text, series)) << metric << " gpu " << g;
    }
  }
  EXPECT_NE(text.find("powershape_node_power_watts{Hostname=\"dgx-7\",gpus=\"8\"} 4280\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("powershape_node_energy_joules_total{Hostname=\"dgx-7\",gpus=\"8\"} 8000\n"),
            std::string::npos);
}

// The node's swings over the last minute: a 2 Hz square wave between 200 and 700 W on two GPUs in
// step gives its period, its 1 kW range, and 96% of its variation in 0.1-20 Hz (the spec's band).
TEST(Prometheus, TheNodesSwingsInTheGridsTerms) {
  trace::Trace t;
  for (int gpu : {0, 1}) {
    telemetry::DeviceInfo d;
    d.index = gpu;
    t.devices.push_back(d);
  }
  for (int i = 0; i <= 90'000; i += 10) {  // 90 s at 10 ms; the last 60 s are measured
    for (int gpu : {0, 1}) {
      trace::Sample s;
      s.t_ns = int64_t{i} * 1'000'000;
      s.gpu = gpu;
      s[Signal::kPowerInstant] = Reading::of((i / 250) % 2 == 0 ? 700'000 : 200'000);
      t.samples.push_back(s);
    }
  }
  const std::string text = prometheus_text(t, 89'000'000'000, 90'000'000'000, nullptr, "n");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      text, m,
      std::regex(
          R"(powershape_node_power_band_share\{Hostname="n",over_s="60",lo_hz="0.1",hi_hz="20",max_share="0.2"\} ([0-9.e-]+))")))
      << text;
  EXPECT_NEAR(std::stod(m[1]), 0.96, 0.01);
  // The node swings by 1 kW: its variation has an RMS of 500 W, 96% of its energy in 0.1-20 Hz.
  ASSERT_TRUE(std::regex_search(
      text, m,
      std::regex(
          R"(powershape_node_power_band_rms_watts\{Hostname="n",over_s="60",lo_hz="0.1",hi_hz="20"\} ([0-9.e-]+))")))
      << text;
  EXPECT_NEAR(std::stod(m[1]), 500 * std::sqrt(0.96), 15);
  ASSERT_TRUE(std::regex_search(
      text, m, std::regex(R"(powershape_node_power_period_seconds\{[^}]*\} ([0-9.e-]+))")));
  EXPECT_NEAR(std::stod(m[1]), 0.5, 0.01);
  ASSERT_TRUE(std::regex_search(
      text, m,
      std::regex(R"(powershape_node_power_range_watts\{[^}]*window_s="10"\} ([0-9.e-]+))")));
  EXPECT_NEAR(std::stod(m[1]), 1000, 1);
  // A recording's first moments: too little for a swing, and no swing gauges.
  trace::Trace young = t;
  young.samples.resize(6);
  EXPECT_EQ(prometheus_text(young, 0, 20'000'000, nullptr, "n").find("node_power_ramp"),
            std::string::npos);
}

// What /metrics and the textfile carry of the CPU: each RAPL zone's counter in J, as a counter;
// nothing without zones.
TEST(Prometheus, EachRaplZoneIsACounterInJoules) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("ps_prom_rapl_" + std::to_string(getpid()));
  fs::create_directories(root / "intel-rapl:0" / "intel-rapl:0:0");
  std::ofstream(root / "intel-rapl:0" / "name") << "package-0\n";
  std::ofstream(root / "intel-rapl:0" / "energy_uj") << "1000000\n";
  std::ofstream(root / "intel-rapl:0" / "intel-rapl:0:0" / "name") << "dram\n";
  std::ofstream(root / "intel-rapl:0" / "intel-rapl:0:0" / "energy_uj") << "5000\n";
  const std::string text = cpu_energy_text(telemetry::RaplCounters(root.string()));
  EXPECT_NE(text.find("# TYPE powershape_cpu_energy_joules_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("powershape_cpu_energy_joules_total{zone=\"package-0\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{zone=\"package-0 dram\"} 0.005\n"), std::string::npos) << text;
  EXPECT_EQ(cpu_energy_text(telemetry::RaplCounters((root / "none").string())), "");
  fs::remove_all(root);
}

}  // namespace powershape::exporter
