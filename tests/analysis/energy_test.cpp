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
  // Each reading is the mean since the one before: 100 W over the first half second, 300 W over
  // the second.
  std::vector<Point> p = {{0, 100'000}, {500'000'000, 100'000}, {1'000'000'000, 300'000}};
  Energy e = energy_from_power(p, 0, 1'000'000'000);
  EXPECT_EQ(e.method, Energy::Method::kPower);
  EXPECT_NEAR(e.energy_mj, 200'000, 1e-6);
  // Before the first reading it holds back, after the last it holds on.
  EXPECT_NEAR(energy_from_power(p, -500'000'000, 1'500'000'000).energy_mj,
              50'000 + 200'000 + 150'000, 1e-6);
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

namespace powershape::analysis {
namespace {

// A known power trace: 100 W and 500 W alternating every 157 ms (not a multiple of the 20 ms
// power samples, so that their misplaced steps do not all fall one way). The counter integrates it
// exactly and updates every 100 ms; it is read every `read_ms` (each read sees the last update).
// The driver's buffer holds the mean power of every 20 ms.
constexpr int64_t kMs = 1'000'000;
double true_power_w(int64_t t_ns) { return (t_ns / (157 * kMs)) % 2 == 0 ? 100 : 500; }
double true_energy_mj(int64_t from, int64_t to) {
  double mj = 0;
  for (int64_t t = from; t < to; t += kMs / 10) mj += true_power_w(t) * 0.1;  // 0.1 ms steps
  return mj;
}
struct Recording {
  std::vector<Point> counter, power;
};
Recording record(int64_t read_ms, int64_t total_ms) {
  Recording r;
  for (int64_t t = 0; t <= total_ms * kMs; t += read_ms * kMs) {
    const int64_t updated = t / (100 * kMs) * (100 * kMs);
    r.counter.push_back({t, static_cast<int64_t>(true_energy_mj(0, updated))});
  }
  // The driver's buffer: the mean over each 20 ms, stamped at its end.
  for (int64_t t = 20 * kMs; t <= total_ms * kMs; t += 20 * kMs) {
    r.power.push_back({t, static_cast<int64_t>(true_energy_mj(t - 20 * kMs, t) / 0.020)});
  }
  return r;
}

}  // namespace

TEST(Energy, WindowsFromTenMillisecondsUpMatchAKnownPowerTrace) {
  for (int64_t read_ms : {1, 100, 1000}) {
    const Recording r = record(read_ms, 20'000);
    for (int64_t width_ms : {10, 30, 50, 110, 300, 1000, 2000, 5000}) {
      for (int64_t start_ms : {3'007, 7'333, 12'101}) {
        const int64_t from = start_ms * kMs, to = (start_ms + width_ms) * kMs;
        const Energy e = window_energy(r.counter, r.power, from, to);
        const double truth = true_energy_mj(from, to);
        // The 20 ms means blur a 400 W step over 20 ms at each end of a window; the counter,
        // used from 5 of its edge spacings, misplaces energy by up to one update (100 ms) or read.
        const double slack =
            e.method == Energy::Method::kPower ? 2 * 400 * 20.0 : 2 * 400 * (100.0 + read_ms);
        EXPECT_NEAR(e.energy_mj, truth, 0.02 * truth + slack)
            << "read every " << read_ms << " ms, window " << width_ms << " ms at " << start_ms;
        // The average power never exceeds the peak: the symptom of the old short-window bug.
        EXPECT_LE(e.energy_mj / static_cast<double>(width_ms), 500 * 1.0001)
            << "read every " << read_ms << " ms, window " << width_ms << " ms at " << start_ms;
      }
    }
  }
}

TEST(Energy, LongWindowsTakeTheCounterShortOnesThePower) {
  const Recording r = record(100, 20'000);
  EXPECT_EQ(window_energy(r.counter, r.power, 1000 * kMs, 1030 * kMs).method,
            Energy::Method::kPower);
  EXPECT_EQ(window_energy(r.counter, r.power, 1000 * kMs, 3000 * kMs).method,
            Energy::Method::kCounter);
  // Without a power series the counter is all there is.
  EXPECT_EQ(window_energy(r.counter, {}, 1000 * kMs, 1030 * kMs).method, Energy::Method::kCounter);
  // Read once a second, the counter needs 5 s.
  const Recording sparse = record(1000, 20'000);
  EXPECT_EQ(window_energy(sparse.counter, sparse.power, 1000 * kMs, 3000 * kMs).method,
            Energy::Method::kPower);
  EXPECT_EQ(window_energy(sparse.counter, sparse.power, 1000 * kMs, 7000 * kMs).method,
            Energy::Method::kCounter);
}

}  // namespace powershape::analysis
