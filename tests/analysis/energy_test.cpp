#include "powershape/analysis/energy.hpp"

#include <gtest/gtest.h>

namespace powershape::analysis {
namespace {

// A counter of a steady 500 W that the driver updates every 100 ms, polled every 1 ms: each poll
// sees the value of the last update.
std::vector<Point> steady_counter(int64_t ms) {
  std::vector<Point> pts;
  for (int64_t t = 0; t <= ms; ++t) {
    int64_t updated = t / 100 * 100;
    pts.push_back({t * 1'000'000, 1'000'000 + updated * 500});  // mJ: 500 W = 500 mJ/ms
  }
  return pts;
}

}  // namespace

TEST(Energy, InterpolatesTheCounterBetweenItsUpdateEdges) {
  auto pts = steady_counter(1000);
  // 230 ms .. 770 ms is between updates at both ends: a plain difference of readings would say
  // 250 J; the edges give the true 270 J.
  Energy e = energy_from_counter(pts, 230'000'000, 770'000'000);
  EXPECT_EQ(e.method, Energy::Method::kCounter);
  EXPECT_NEAR(e.energy_mj, 270'000, 1);
  EXPECT_EQ(e.counter_updates, 5);
}

TEST(Energy, ExtendsTheEdgeSegmentsPastTheFirstAndLastUpdate) {
  auto pts = steady_counter(1000);
  EXPECT_NEAR(energy_from_counter(pts, 0, 1'000'000'000).energy_mj, 500'000, 1);
}

TEST(Energy, NeedsTwoUpdates) {
  std::vector<Point> flat = {{0, 5}, {1'000'000, 5}};
  EXPECT_EQ(energy_from_counter(flat, 0, 1'000'000).method, Energy::Method::kNone);
}

TEST(Energy, IntegratesPowerWhenThereIsNoCounter) {
  std::vector<Point> p = {{0, 100'000}, {500'000'000, 300'000}};  // 100 W then 300 W
  Energy e = energy_from_power(p, 0, 1'000'000'000);
  EXPECT_EQ(e.method, Energy::Method::kPower);
  EXPECT_NEAR(e.energy_mj, 200'000, 1e-6);
}

}  // namespace powershape::analysis

namespace powershape::analysis {

TEST(Energy, SpreadsSparseCounterReadsByAFinerPowerSeries) {
  // Counter read once a second; power 100 W for the first half of each second, 500 W for the
  // second half (the driver buffer shows it). The window 0.25..0.75 s holds
  // 0.25 s x 100 W + 0.25 s x 500 W = 150 J.
  std::vector<Point> power, counter;
  for (int64_t ms = 0; ms < 4000; ms += 20)
    power.push_back({ms * 1'000'000, ms % 1000 < 500 ? 100'000 : 500'000});
  for (int64_t s = 0; s <= 3; ++s) counter.push_back({s * 1'000'000'000, s * 300'000});
  Energy spread = energy_from_counter(counter, 250'000'000, 750'000'000, power);
  EXPECT_NEAR(spread.energy_mj, 150'000, 1);
  // Off-centre, linear interpolation alone is wrong by a factor of three.
  EXPECT_NEAR(energy_from_counter(counter, 0, 500'000'000, power).energy_mj, 50'000, 1);
  EXPECT_NEAR(energy_from_counter(counter, 0, 500'000'000).energy_mj, 150'000, 1);
  // Past the last read, the power integral extends the counter: 2.5 .. 3.4 s.
  EXPECT_NEAR(energy_from_counter(counter, 2'500'000'000, 3'400'000'000, power).energy_mj,
              0.5 * 500'000 + 0.4 * 100'000, 1);
}

}  // namespace powershape::analysis
