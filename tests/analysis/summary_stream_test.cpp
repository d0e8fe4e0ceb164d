#include "powershape/analysis/summary_stream.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "powershape/trace/csv_reader.hpp"

namespace powershape::analysis {
namespace {
using telemetry::Signal;

// Two passes over the rows, as report makes them over a file.
std::vector<Summary> streamed(const trace::Trace& t) {
  SummaryPlanner planner;
  for (const auto& row : t.samples) planner.add(row);
  EXPECT_TRUE(planner.in_time_order());
  SummaryStream stream(planner.plan(t.regions));
  for (const auto& row : t.samples) stream.add(row);
  return stream.finish();
}

// Within the rounding of sums taken in another order.
void expect_near(std::optional<double> a, std::optional<double> b, const std::string& what) {
  ASSERT_EQ(a.has_value(), b.has_value()) << what;
  if (a) {
    EXPECT_NEAR(*a, *b, 1e-9 * std::max(1.0, std::abs(*b))) << what;
  }
}

void expect_same(const trace::Trace& t, const std::string& name) {
  const auto want = summarize(t);
  const auto got = streamed(t);
  ASSERT_EQ(got.size(), want.size()) << name;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const Summary &g = got[i], &w = want[i];
    const std::string what = name + " #" + std::to_string(i) + " " + w.name;
    EXPECT_EQ(g.name, w.name) << what;
    EXPECT_EQ(g.gpu, w.gpu) << what;
    EXPECT_EQ(g.begin_ns, w.begin_ns) << what;
    EXPECT_EQ(g.end_ns, w.end_ns) << what;
    EXPECT_EQ(g.energy.method, w.energy.method) << what;
    EXPECT_EQ(g.energy.counter_updates, w.energy.counter_updates) << what;
    expect_near(g.energy.energy_mj, w.energy.energy_mj, what + " energy");
    expect_near(g.avg_power_w, w.avg_power_w, what + " avg");
    expect_near(g.peak_power_w, w.peak_power_w, what + " peak");
    EXPECT_EQ(g.sm_clock_mhz.covered_ns, w.sm_clock_mhz.covered_ns) << what;
    expect_near(g.sm_clock_mhz.mean, w.sm_clock_mhz.mean, what + " clock mean");
    for (auto [a, b] : {std::pair{g.sm_clock_mhz.p5, w.sm_clock_mhz.p5},
                        std::pair{g.sm_clock_mhz.p50, w.sm_clock_mhz.p50},
                        std::pair{g.sm_clock_mhz.p95, w.sm_clock_mhz.p95}})
      EXPECT_EQ(a, b) << what;
    EXPECT_EQ(g.sm_clock_mhz.min, w.sm_clock_mhz.min) << what;
    EXPECT_EQ(g.sm_clock_mhz.max, w.sm_clock_mhz.max) << what;
    ASSERT_EQ(g.reason_fraction.size(), w.reason_fraction.size()) << what;
    for (std::size_t k = 0; k < w.reason_fraction.size(); ++k) {
      EXPECT_EQ(g.reason_fraction[k].first, w.reason_fraction[k].first) << what;
      expect_near(g.reason_fraction[k].second, w.reason_fraction[k].second, what + " reason");
    }
    expect_near(g.throttle_sw_power_fraction, w.throttle_sw_power_fraction, what + " sw power");
    expect_near(g.throttle_thermal_fraction, w.throttle_thermal_fraction, what + " thermal");
    EXPECT_EQ(g.peak_temp_c, w.peak_temp_c) << what;
  }
}

}  // namespace

// Recordings of every kind the data holds: a monitor's H200 run (the driver's buffer rows after
// the polls that harvested them, the counter at its own rate), a fine-tune with 196 regions, an
// H100 grid run with its steps marked, a square wave.
TEST(SummaryStream, EqualsSummarizeOnRecordings) {
  for (const char* f : {"/h200/gemm_sustained_trace.csv", "/h200/finetune_qwen2_0.5b_trace.csv",
                        "/h100/smooth_2026-12-06/grid_marked90.csv",
                        "/h200/square_wave_idle_trace.csv", "/h200/grid_2026-12-05/grid_0.5.csv"})
    expect_same(trace::read_csv(std::string(POWERSHAPE_DATA) + f), f);
}

// What recordings rarely hold: two GPUs, the throttle-time counters, regions that nest, overlap,
// have no length or lie outside the recording, a counter with one edge, a window shorter than the
// counter's spacing, power only from the 1 s average on one GPU.
TEST(SummaryStream, EqualsSummarizeOnEdgeCases) {
  trace::Trace t;
  for (int i = 0; i < 400; ++i) {
    for (int g = 0; g < 2; ++g) {
      telemetry::Sample s;
      s.gpu = g;
      s.t_ns = 1'000'000'000 + int64_t{i} * 10'000'000 + g * 3'000'000;
      const int64_t mw = 100'000 + 500'000 * ((i / 37) % 2) + 1'000 * (i % 7);
      s[g == 0 ? Signal::kPowerInstant : Signal::kPowerUsage] = telemetry::Reading::of(mw);
      if (g == 0 && i % 10 == 0) s[Signal::kEnergy] = telemetry::Reading::of(5'000 + i * 5'000);
      if (g == 1 && i == 50) s[Signal::kEnergy] = telemetry::Reading::of(77);  // one edge only
      s[Signal::kSmClock] = telemetry::Reading::of(1200 + 15 * ((i * 7) % 11));
      s[Signal::kReasons] = telemetry::Reading::of(i % 5 == 0 ? 4 : 1);
      s[Signal::kGpuTemp] = telemetry::Reading::of(40 + i / 20);
      if (i % 3 == 0) s[Signal::kThrottleSwPower] = telemetry::Reading::of(int64_t{i} * 4'000'000);
      if (i % 4 == 0)
        s[Signal::kThrottleHwThermal] = telemetry::Reading::of(int64_t{i / 50} * 1'000'000);
      t.samples.push_back(s);
    }
  }
  t.regions = {
      {"step", -1, 1'100'000'000, 2'000'000'000},  {"inner", 0, 1'200'000'000, 1'250'000'000},
      {"short", -1, 1'500'000'000, 1'520'000'000}, {"overlap", 1, 1'900'000'000, 3'500'000'000},
      {"empty", -1, 2'200'000'000, 2'200'000'000}, {"before", -1, 0, 900'000'000},
      {"after", 0, 9'000'000'000, 9'500'000'000},  {"whole", -1, 0, 10'000'000'000}};
  expect_same(t, "edge cases");
}

}  // namespace powershape::analysis
