#include "powershape/analysis/fold.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "error_of.hpp"

namespace powershape::analysis {
namespace {

using testing::error_of;

// Steps of 100 ms every 120 ms from 1 s on, at 1 ms: 200 W for a step's first 30 ms, 700 W for
// the rest, and 50 W between steps (which no bin may hold).
PowerSeries steps(int n) {
  PowerSeries p{0.5, 1e-3, {}};
  for (int i = 0; i < 500 + 120 * n + 200; ++i) {
    const double t = 0.5 + (i + 0.5) * 1e-3;
    const double since = t - 1.0 - 0.12 * std::floor((t - 1.0) / 0.12);
    p.w.push_back(t < 1.0 || t > 1.0 + 0.12 * n ? 50 : since < 0.03 ? 200 : since < 0.1 ? 700 : 50);
  }
  return p;
}

std::vector<std::pair<double, double>> regions(int n) {
  std::vector<std::pair<double, double>> r;
  for (int i = 0; i < n; ++i) r.emplace_back(1.0 + 0.12 * i, 1.0 + 0.12 * i + 0.1);
  return r;
}

}  // namespace

TEST(Fold, EachBinHoldsItsStretchOfTheStep) {
  const Fold f = fold_power(steps(20), regions(20), 0.01);
  EXPECT_EQ(fold_power(steps(20), regions(20), 0.01, 1000).bins[0].median_w, 200e3);  // a fleet
  EXPECT_EQ(f.regions, 20u);
  EXPECT_NEAR(f.median_length_s, 0.1, 1e-9);
  ASSERT_EQ(f.bins.size(), 10u);
  for (const auto& b : f.bins) {
    const double want = b.from_s < 0.03 - 1e-9 ? 200 : 700;
    EXPECT_EQ(b.min_w, want) << b.from_s;
    EXPECT_EQ(b.max_w, want) << b.from_s;
    EXPECT_EQ(b.n, 200u) << b.from_s;  // 10 samples a step, 20 steps
  }
  const auto j = to_json(f, "step");
  EXPECT_EQ(j["region"], "step");
  EXPECT_EQ(j["bins"].size(), 10u);
  EXPECT_EQ(j["bins"][0]["median_w"], 200);
}

TEST(Fold, ALongerRegionsTailAndSamplesOutsideAreLeftOut) {
  auto r = regions(5);
  r.back().second += 0.5;  // one step far longer: the median length stands
  const Fold f = fold_power(steps(5), r, 0.05);
  EXPECT_NEAR(f.median_length_s, 0.1, 1e-9);
  ASSERT_EQ(f.bins.size(), 2u);
  EXPECT_EQ(f.bins[1].min_w, 700);  // no 50 W reading from between or after the steps
}

TEST(Fold, RefusesWhatGivesNoFold) {
  EXPECT_NE(error_of([] { fold_power(steps(3), regions(3), 0); }).find("positive"),
            std::string::npos);
  EXPECT_NE(error_of([] { fold_power(steps(3), regions(3), 1e-6); }).find("10000 bins"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              fold_power(steps(3), {{100, 101}}, 0.01);
            }).find("no power sample"),
            std::string::npos);
  // 30 ms means over 100 ms steps: a sample is a third of a step, no shape is left to show.
  PowerSeries coarse{0.5, 0.03, std::vector<double>(100, 300)};
  EXPECT_NE(error_of([&] { fold_power(coarse, regions(3), 0.01); }).find("too coarse"),
            std::string::npos);
}

}  // namespace powershape::analysis
