#include "powershape/shape/pacer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "error_of.hpp"
#include "powershape/analysis/swing.hpp"

namespace powershape::shape {
namespace {

constexpr int64_t kMs = 1'000'000;

// A job paced in closed loop: every 10 ms the GPU draws the job's power (`job_w(t)`, a function
// of the time the job has run, so that a held job's work waits) or the floor's while it is held;
// the pacer sees each reading `lag_ms` late. Returns the power series and the seconds held.
struct Paced {
  analysis::PowerSeries power;
  std::vector<bool> held;  // a sample each
  double held_s(double from_s = 0) const {
    return 0.01 * static_cast<double>(
                      std::count(held.begin() + static_cast<long>(from_s * 100), held.end(), true));
  }
};
Paced pace(Pacer& p, double seconds, double floor_w, const std::function<double(double)>& job_w,
           int lag_ms = 60, int drain_ms = 0) {
  Paced r;
  r.power.dt_s = 0.01;
  std::deque<std::pair<int64_t, double>> late;
  double ran_s = 0;
  bool held = false;
  int64_t held_since = 0;
  for (int64_t t = 0; t < static_cast<int64_t>(seconds * 1000) * kMs; t += 10 * kMs) {
    // A held job's GPU runs on through its queued kernels for drain_ms.
    const bool drained = held && t - held_since >= drain_ms * kMs;
    const double w = drained ? floor_w : std::max(floor_w, job_w(ran_s));
    if (!held) ran_s += 0.01;
    r.power.w.push_back(w);
    r.held.push_back(held);
    late.emplace_back(t + lag_ms * kMs, w);
    while (!late.empty() && late.front().first <= t) {
      p.observe(late.front().first - lag_ms * kMs, late.front().second);
      late.pop_front();
    }
    const bool was = held;
    held = p.hold(t);
    if (held && !was) held_since = t;
  }
  return r;
}

PacerOptions options(double ramp, double armed_below_w) {
  PacerOptions o;
  o.ramp_w_per_s = ramp;
  o.armed_below_w = armed_below_w;
  return o;
}

TEST(Pacer, AJobThatStartsAtFullPowerRisesNoFasterThanTheRamp) {
  // 10 s at the floor (imports, loading), then 600 W at once: unpaced, a 1 s window sees 320 W/s.
  for (const double ramp : {50.0, 100.0, 300.0}) {
    Pacer p(options(ramp, 300));
    const auto job = [](double s) { return s < 10 ? 280.0 : 600.0; };
    const Paced r = pace(p, 30, 280, job);
    const auto seen = analysis::ramp_rates(r.power, 1.0);
    // What the readings' lag (60 ms, and a 10 ms decision) shows late passes unpaced: 70 ms of
    // the job's 320 W above the floor in a 1 s window.
    EXPECT_LE(seen.up_max_w_per_s, ramp + 0.07 * 320) << ramp;
    EXPECT_GT(seen.up_max_w_per_s, ramp * 0.5) << ramp;  // not held longer than it must be
    // The rise of 320 W takes about 320 / ramp s; the job is held about half of it and then runs.
    EXPECT_GT(r.held_s(), 0.1 * 320 / ramp) << ramp;
    EXPECT_LT(r.held_s(), 1.5 * 320 / ramp) << ramp;
    EXPECT_FALSE(p.armed()) << ramp;
  }
  Pacer unpaced(options(1e6, 300));
  EXPECT_GT(analysis::ramp_rates(
                pace(unpaced, 30, 280, [](double s) { return s < 10 ? 280.0 : 600.0; }).power, 1.0)
                .up_max_w_per_s,
            300);
}

// A job whose GPU runs on for 200 ms after each hold (the kernels of a step it had queued): the
// pacer learns the drain from the readings and still holds the rise near the ramp.
TEST(Pacer, AJobWhoseGpuRunsOnThroughAHoldIsStillPaced) {
  Pacer p(options(100, 300));
  const auto job = [](double s) { return s < 10 ? 280.0 : 600.0; };
  const Paced r = pace(p, 40, 280, job, 60, 200);
  EXPECT_NEAR(static_cast<double>(p.drain_ns()) * 1e-6, 200, 60);
  // What the drain shows late passes unpaced once (the first hold, before anything is learnt),
  // then the learnt drain holds each rise.
  EXPECT_LE(analysis::ramp_rates(r.power, 1.0).up_max_w_per_s, 100 + 0.27 * 320);
  EXPECT_FALSE(p.armed());
}

TEST(Pacer, AJobAtItsLevelIsNotHeldForItsStepsRipple) {
  // 265 ms steps: 700 W for 220 ms, the floor's 420 W for 45 ms; a 1 s window's mean moves by
  // tens of W from one step to the next, more than a 10 W/s ramp allows. The job starts after
  // 3 s at the floor; its rise is paced, and then it runs free.
  Pacer p(options(10, 462));
  const auto job = [](double s) {
    return s < 3 ? 420.0 : std::fmod(s, 0.265) < 0.22 ? 700.0 : 420.0;
  };
  const Paced r = pace(p, 80, 420, job);
  EXPECT_GT(r.held_s(), 5);
  EXPECT_EQ(r.held_s(50), 0);
  EXPECT_FALSE(p.armed());
}

TEST(Pacer, ACheckpointAtTheFloorArmsItAgain) {
  // 5 s at its level, 5 s at the floor (a checkpoint), then back at its level at once.
  Pacer p(options(100, 300));
  const auto job = [](double s) { return s >= 5 && s < 10 ? 280.0 : 600.0; };
  const Paced r = pace(p, 25, 280, job);
  // The first rise is not paced (the job started before any reading: no window before it).
  const analysis::PowerSeries after{0, 0.01, {r.power.w.begin() + 800, r.power.w.end()}};
  EXPECT_LE(analysis::ramp_rates(after, 1.0).up_max_w_per_s, 100 + 0.07 * 320);
  EXPECT_GT(r.held_s(), 0.5);
}

TEST(Pacer, AReadingThatIsNoNumberIsIgnored) {
  Pacer p(options(100, 300));
  for (int64_t t = 0; t < 2000; t += 10) p.observe(t * kMs, 280);
  p.observe(2000 * kMs, std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(p.hold(2000 * kMs));
  for (int64_t t = 2000; t < 2500; t += 10) p.observe(t * kMs, 600);
  EXPECT_TRUE(p.hold(2500 * kMs));
}

TEST(Pacer, BadOptionsNameWhatIsWrong) {
  const auto error = [](PacerOptions o) { return testing::error_of([&] { Pacer p(o); }); };
  EXPECT_EQ(error(options(0, 300)), "ramp: expected W/s above 0, at most 1e9");
  EXPECT_EQ(error(options(NAN, 300)), "ramp: expected W/s above 0, at most 1e9");
  EXPECT_EQ(error(options(100, -1)), "floor: expected watts from 0 to 100000");
  auto o = options(100, 300);
  o.window_ns = 0;
  EXPECT_EQ(error(o), "ramp window: expected 1 ms to an hour");
}

}  // namespace
}  // namespace powershape::shape
