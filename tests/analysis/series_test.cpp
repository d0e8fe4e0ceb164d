#include "powershape/analysis/series.hpp"

#include <gtest/gtest.h>

namespace powershape::analysis {

TEST(Series, TakesValidReadingsOfOneGpuInTimeOrder) {
  trace::Trace t;
  auto add = [&](int64_t ts, int gpu, telemetry::Reading r) {
    trace::Sample s;
    s.t_ns = ts;
    s.gpu = gpu;
    s[telemetry::Signal::kSmClock] = r;
    t.samples.push_back(s);
  };
  add(30, 0, telemetry::Reading::of(3));
  add(10, 0, telemetry::Reading::of(1));
  add(20, 1, telemetry::Reading::of(9));
  add(40, 0, telemetry::Reading::failed(telemetry::Status::kError));
  auto s = series(t, 0, telemetry::Signal::kSmClock);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].t_ns, 10);
  EXPECT_EQ(s[1].value, 3);
}

TEST(Series, HeldCoversTheWindowFromTheReadingInForce) {
  std::vector<Point> pts = {{0, 100}, {10, 200}, {30, 300}};
  auto h = held(pts, 5, 35);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].value, 100);
  EXPECT_EQ(h[0].duration_ns, 5);
  EXPECT_EQ(h[1].duration_ns, 20);
  EXPECT_EQ(h[2].duration_ns, 5);
}

TEST(Series, DistributionIsTimeWeighted) {
  // 1980 MHz for 10 ns, 1500 MHz for 90 ns: the mean and median follow time, not row counts.
  Distribution d = distribution({{1980, 10}, {1500, 90}});
  EXPECT_NEAR(d.mean, 1548, 1e-9);
  EXPECT_EQ(d.p50, 1500);
  EXPECT_EQ(d.p5, 1500);
  EXPECT_EQ(d.p95, 1980);
  EXPECT_EQ(d.covered_ns, 100);
  EXPECT_EQ(distribution({}).covered_ns, 0);
}

}  // namespace powershape::analysis
