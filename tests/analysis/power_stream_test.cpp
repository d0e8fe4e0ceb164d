#include "powershape/analysis/power_stream.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "error_of.hpp"
#include "powershape/trace/csv_reader.hpp"

namespace powershape::analysis {
namespace {

PowerInput streamed(const trace::Trace& t) {
  TracePowerStream s(t.samples.front().t_ns);
  for (const auto& row : t.samples) s.plan(row);
  s.start(t.devices);
  for (const auto& row : t.samples) s.add(row);
  return s.finish();
}

}  // namespace

// Two passes over the rows give trace_power's series: the same grid, signal, GPUs and rated power,
// each sample within the rounding of sums in another order (and of the gaps, here in whole ns).
TEST(TracePowerStream, GivesTracePowersSeries) {
  for (const char* f :
       {"/h200/gemm_sustained_trace.csv", "/h200/finetune_qwen2_0.5b_trace.csv",
        "/h100/smooth_2026-12-06/grid_marked90.csv", "/h200/square_wave_idle_trace.csv"}) {
    const auto t = trace::read_csv(std::string(POWERSHAPE_DATA) + f);
    const PowerInput want = trace_power(t, INT64_MIN, INT64_MAX, 0);
    const PowerInput got = streamed(t);
    EXPECT_EQ(got.signal, want.signal) << f;
    EXPECT_EQ(got.gpus, want.gpus) << f;
    EXPECT_EQ(got.rated_w, want.rated_w) << f;
    EXPECT_NEAR(got.reading_interval_s, want.reading_interval_s, 1e-12) << f;
    EXPECT_NEAR(got.power.t0_s, want.power.t0_s, 1e-12) << f;
    EXPECT_NEAR(got.power.dt_s, want.power.dt_s, 1e-12) << f;
    ASSERT_EQ(got.power.w.size(), want.power.w.size()) << f;
    for (std::size_t i = 0; i < want.power.w.size(); ++i)
      ASSERT_NEAR(got.power.w[i], want.power.w[i], 1e-7 * std::max(1.0, want.power.w[i]))
          << f << " " << i;
  }
}

// A GPU listed twice (a device line repeated) leaves the rated power unknown, as trace_power has
// it.
TEST(TracePowerStream, AGpuListedTwiceLeavesTheRatedPowerUnknown) {
  trace::Trace t;
  telemetry::DeviceInfo d;
  d.power_limit_mw = telemetry::Reading::of(700'000);
  t.devices = {d, d};
  for (int i = 0; i < 31; ++i) {
    telemetry::Sample s;
    s.t_ns = int64_t{i} * 100'000'000;
    s[telemetry::Signal::kPowerUsage] = telemetry::Reading::of(300'000 + 1000 * i);
    t.samples.push_back(s);
  }
  EXPECT_EQ(trace_power(t, INT64_MIN, INT64_MAX, 0).rated_w, 0);
  EXPECT_EQ(streamed(t).rated_w, 0);
  t.devices.pop_back();
  EXPECT_EQ(streamed(t).rated_w, 700);
}

// No power, or power over less than two intervals: said as trace_power says it.
TEST(TracePowerStream, RefusesWhatTracePowerRefuses) {
  trace::Trace t;
  for (int i = 0; i < 3; ++i) {
    telemetry::Sample s;
    s.t_ns = i * 1'000'000;
    s[telemetry::Signal::kSmClock] = telemetry::Reading::of(1000);
    t.samples.push_back(s);
  }
  EXPECT_NE(testing::error_of([&] { streamed(t); }).find("no power readings"), std::string::npos);
  t.samples[0][telemetry::Signal::kPowerUsage] = telemetry::Reading::of(100'000);
  t.samples[1][telemetry::Signal::kPowerUsage] = telemetry::Reading::of(100'000);
  EXPECT_NE(testing::error_of([&] { streamed(t); }).find("less than two intervals"),
            std::string::npos);
}

}  // namespace powershape::analysis
