#include "powershape/report/bins.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace powershape::report {
namespace {

using analysis::Point;

Extremes bin_extremes(const std::vector<Point>& pts, const Bins& b, double scale) {
  ExtremeBins e(b, scale);
  for (const auto& p : pts) e.add(p);
  return e.finish();
}

std::vector<float> bin_fraction(const std::vector<Point>& pts, const Bins& b, uint64_t bit) {
  FractionBins f(b);
  for (const auto& p : pts) f.add(p);
  f.finish();
  return f.fraction(bit);
}

TEST(ReportBins, TheLastReadingFallsInTheLastBin) {
  const Bins b = make_bins(0, 1000, 10);
  EXPECT_EQ(b.width_ns, 101);
  EXPECT_EQ(b.count, 10u);
  EXPECT_GT(b.from_ns + b.width_ns * static_cast<int64_t>(b.count), 1000);
  EXPECT_EQ(make_bins(5, 5, 100).count, 1u);   // one instant: one bin, not none
  EXPECT_EQ(make_bins(0, 9, 100).count, 10u);  // never finer than 1 ns
}

TEST(ReportBins, ExtremesHoldEachReadingUntilTheNext) {
  // 10 W from 0, 30 W from 250, 20 W from 260: a 10 ns spike inside the third bin of 100 ns.
  const std::vector<Point> pts = {{0, 10'000}, {250, 30'000}, {260, 20'000}, {399, 20'000}};
  const Bins b = make_bins(0, 399, 4);
  ASSERT_EQ(b.count, 4u);
  const Extremes e = bin_extremes(pts, b, 1e-3);
  EXPECT_FLOAT_EQ(e.min[0], 10);
  EXPECT_FLOAT_EQ(e.max[1], 10);  // held from t = 0, no reading inside
  EXPECT_FLOAT_EQ(e.min[2], 10);
  EXPECT_FLOAT_EQ(e.max[2], 30);  // the spike survives the reduction
  EXPECT_FLOAT_EQ(e.min[3], 20);
  EXPECT_FLOAT_EQ(e.max[3], 20);
}

TEST(ReportBins, NothingIsDrawnBeforeTheFirstReading) {
  const Extremes e = bin_extremes({{150, 7}}, make_bins(0, 199, 2), 1);
  EXPECT_TRUE(std::isnan(e.min[0]));
  EXPECT_FLOAT_EQ(e.max[1], 7);
}

TEST(ReportBins, AReasonsShareIsTheTimeItsBitWasSet) {
  // The power-cap bit (4) set from 25 to 75 ns of a 100 ns bin, with another bit alongside.
  const std::vector<Point> pts = {{0, 1}, {25, 4 | 1}, {75, 0}, {99, 0}};
  const auto f = bin_fraction(pts, make_bins(0, 99, 1), 4);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(f[0], 0.5, 1e-6);
  EXPECT_NEAR(bin_fraction(pts, make_bins(0, 99, 1), 1)[0], 0.75, 1e-6);
}

}  // namespace
}  // namespace powershape::report
