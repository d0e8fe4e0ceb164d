#include "powershape/analysis/summary.hpp"

#include <gtest/gtest.h>

#include "powershape/trace/csv_reader.hpp"

namespace powershape::analysis {

// The recorded H200 run: 0.5 s idle, 12 s of 8192^3 bf16 products, 1 s idle. Its README says the
// load held the SW power cap in 95% of samples at an SM clock mean of 1507 MHz, 57 C at most.
TEST(Summary, ReproducesWhatTheH200RecordingShows) {
  auto t = trace::read_csv(POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv");
  auto all = summarize(t);
  ASSERT_EQ(all.size(), 1u);
  const Summary& s = all[0];
  EXPECT_NEAR(s.duration_s(), 13.5, 0.5);
  EXPECT_EQ(s.energy.method, Energy::Method::kCounter);
  EXPECT_GT(s.energy.counter_updates, 100);
  ASSERT_TRUE(s.avg_power_w);
  EXPECT_GT(*s.avg_power_w, 550);
  EXPECT_LT(*s.avg_power_w, 700);
  ASSERT_TRUE(s.peak_power_w);
  EXPECT_GT(*s.peak_power_w, 700);
  EXPECT_GT(*s.power_capped_fraction(), 0.75);
  EXPECT_EQ(*s.thermal_fraction(), 0.0);
  EXPECT_LE(*s.peak_temp_c, 57);
  // Over the loaded second 2..12 s: the cap nearly always, the clock near 1500 MHz.
  Summary load = summarize(t, 0, "load", s.begin_ns + 2'000'000'000, s.begin_ns + 12'000'000'000);
  EXPECT_GT(*load.power_capped_fraction(), 0.9);
  EXPECT_NEAR(load.sm_clock_mhz.mean, 1500, 60);
  EXPECT_GT(*load.avg_power_w, 650);
  EXPECT_LT(*load.avg_power_w, 720);
}

TEST(Summary, SummarisesEachRegion) {
  auto t = trace::read_csv(POWERSHAPE_DATA "/h200/square_wave_idle_trace.csv");
  auto all = summarize(t);
  auto find = [&](const std::string& n) {
    for (const auto& s : all) {
      if (s.name == n) return s;
    }
    ADD_FAILURE() << n;
    return Summary{};
  };
  // Short bursts keep the boost clock; continuous products are capped (the README's table).
  EXPECT_EQ(*find("sq_idle_2ms").power_capped_fraction(), 0.0);
  EXPECT_GT(find("sq_idle_2ms").sm_clock_mhz.mean, 1950);
  EXPECT_GT(*find("gemm_only").power_capped_fraction(), 0.8);
  EXPECT_LT(find("gemm_only").sm_clock_mhz.mean, 1700);
  auto j = to_json(all);
  EXPECT_EQ(j.size(), all.size());
  EXPECT_TRUE(j[0].contains("energy_j"));
}

// Short windows around the H200's step from idle into products, where the 1 s power average
// lags the energy: the peak is never under the average (the exporter once said 131 W average,
// 125 W peak for a step).
TEST(Summary, ThePeakIsNeverUnderTheAverage) {
  auto t = trace::read_csv(POWERSHAPE_DATA "/h200/finetune_qwen2_0.5b_trace.csv");
  const Summary whole = summarize(t).front();
  int checked = 0;
  for (int64_t at = whole.begin_ns; at + 200'000'000 < whole.end_ns; at += 97'000'000) {
    const Summary s = summarize(t, 0, "w", at, at + 190'000'000);
    if (!s.peak_power_w || !s.avg_power_w) continue;
    ++checked;
    EXPECT_GE(*s.peak_power_w, *s.avg_power_w) << "window at " << at;
  }
  EXPECT_GT(checked, 100);
}

}  // namespace powershape::analysis
