#include "powershape/report/trace_digest.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "powershape/trace/csv_reader.hpp"

namespace powershape::report {
namespace {

void expect_same_floats(const std::vector<float>& a, const std::vector<float>& b,
                        const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (std::isnan(b[k])) {
      EXPECT_TRUE(std::isnan(a[k])) << what << " bin " << k;
    } else {
      EXPECT_EQ(a[k], b[k]) << what << " bin " << k;
    }
  }
}

// A file read twice, row by row, shows what the file read whole shows: the same bins, the same
// summaries (to the rounding of sums in another order), the same power for the swing section.
TEST(TraceDigest, AFileReadRowByRowShowsWhatItShowsReadWhole) {
  // And an nvidia-smi log of two GPUs (read whole by its own reader, then streamed).
  const auto smi =
      std::filesystem::temp_directory_path() / ("smi-" + std::to_string(getpid()) + ".csv");
  std::ofstream(smi) << "timestamp, index, power.draw [W], clocks.sm [MHz], power.limit [W]\n"
                        "2026/12/02 10:00:00.000, 0, 80.00 W, 345 MHz, 700.00 W\n"
                        "2026/12/02 10:00:00.000, 1, 81.00 W, 345 MHz, 700.00 W\n"
                        "2026/12/02 10:00:00.100, 0, 690.00 W, 1980 MHz, 700.00 W\n"
                        "2026/12/02 10:00:00.100, 1, 650.00 W, 1900 MHz, 700.00 W\n"
                        "2026/12/02 10:00:00.200, 0, 700.00 W, 1755 MHz, 700.00 W\n"
                        "2026/12/02 10:00:00.200, 1, 640.00 W, 1890 MHz, 700.00 W\n";
  for (const std::string& f :
       {std::string("/h200/finetune_qwen2_0.5b_trace.csv"),
        std::string("/h100/smooth_2026-12-06/grid_marked90.csv"), smi.string()}) {
    const std::string path = f == smi.string() ? f : std::string(POWERSHAPE_DATA) + f;
    const auto streamed = digest_file(path, 3000, true);
    ASSERT_TRUE(streamed.has_value()) << f;
    const TraceDigest whole = digest(trace::read_csv(path), 3000, true);
    EXPECT_EQ(streamed->rows, whole.rows) << f;
    EXPECT_EQ(streamed->t0_ns, whole.t0_ns) << f;
    EXPECT_EQ(streamed->header.events, whole.header.events) << f;
    EXPECT_EQ(streamed->header.regions, whole.header.regions) << f;
    EXPECT_EQ(streamed->bins.count, whole.bins.count) << f;
    ASSERT_EQ(streamed->gpus.size(), whole.gpus.size()) << f;
    for (std::size_t g = 0; g < whole.gpus.size(); ++g) {
      const auto &s = streamed->gpus[g], &w = whole.gpus[g];
      ASSERT_EQ(s.series.size(), w.series.size()) << f;
      for (std::size_t i = 0; i < w.series.size(); ++i) {
        expect_same_floats(s.series[i].extremes.min, w.series[i].extremes.min, f);
        expect_same_floats(s.series[i].extremes.max, w.series[i].extremes.max, f);
      }
      EXPECT_EQ(s.reasons.seen(), w.reasons.seen()) << f;
      expect_same_floats(s.reasons.fraction(4), w.reasons.fraction(4), f);
    }
    ASSERT_EQ(streamed->summary.size(), whole.summary.size()) << f;
    for (std::size_t i = 0; i < whole.summary.size(); ++i)
      EXPECT_NEAR(streamed->summary[i].energy.energy_mj, whole.summary[i].energy.energy_mj,
                  1e-9 * whole.summary[i].energy.energy_mj)
          << f;
    ASSERT_TRUE(streamed->power.has_value()) << f;
    ASSERT_EQ(streamed->power->power.w.size(), whole.power->power.w.size()) << f;
    for (std::size_t i = 0; i < whole.power->power.w.size(); ++i)
      EXPECT_NEAR(streamed->power->power.w[i], whole.power->power.w[i], 1e-6) << f << " " << i;
    EXPECT_EQ(streamed->power->rated_w, whole.power->rated_w) << f;
  }
  std::filesystem::remove(smi);
}

// Rows another tool wrote out of time order cannot be streamed: the caller reads them whole.
TEST(TraceDigest, RowsOutOfTimeOrderAreLeftToAWholeRead) {
  const auto path =
      std::filesystem::temp_directory_path() / ("digest-" + std::to_string(getpid()) + ".csv");
  std::ofstream(path) << "t_s,power_usage_mw\n0.2,100000\n0.1,200000\n0.3,300000\n";
  EXPECT_FALSE(digest_file(path.string(), 100, true).has_value());
  const TraceDigest d = digest(trace::read_csv(path.string()), 100, true);
  EXPECT_EQ(d.rows, 3u);
  std::filesystem::remove(path);
}

// What the stream cannot hold to read's figures, read whole: an energy reading out of time order
// (even one left out as beyond any GPU: it would have been unwrapped in another order), and many
// long windows over many clocks (each holds its clock histogram until it ends).
TEST(TraceDigest, WhatCannotStreamIsLeftToAWholeRead) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto energy = dir / ("energy-" + std::to_string(getpid()) + ".csv");
  {
    std::ofstream f(energy);
    f << "t_ns,gpu,power_usage_mw,energy_mj\n3000000000,0,,200000000000000000\n";
    for (int i = 0; i < 6; ++i)
      f << int64_t{i} * 1'000'000'000 << ",0,100000," << i * 100000 << "\n";
  }
  EXPECT_FALSE(digest_file(energy.string(), 100, true).has_value());
  std::filesystem::remove(energy);
  const auto clocks = dir / ("clocks-" + std::to_string(getpid()) + ".csv");
  {
    std::ofstream f(clocks);
    for (int k = 0; k < 600; ++k)
      f << "# region {\"name\":\"r" << k << "\",\"gpu\":-1,\"begin_ns\":" << k
        << ",\"end_ns\":100000}\n";
    f << "t_ns,gpu,power_usage_mw,sm_clock_mhz\n";
    for (int i = 0; i <= 10000; ++i) f << i * 10 << ",0,100000," << i << "\n";
  }
  EXPECT_FALSE(digest_file(clocks.string(), 100, true).has_value());
  EXPECT_TRUE(digest_file(clocks.string(), 100, false).has_value());  // no summary: it streams
  std::filesystem::remove(clocks);
}

}  // namespace
}  // namespace powershape::report
