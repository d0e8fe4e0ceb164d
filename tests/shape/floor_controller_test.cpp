#include "powershape/shape/floor_controller.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "error_of.hpp"
#include "powershape/util/error.hpp"

namespace powershape::shape {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A GPU that draws the job's power or the filler's (idle + slope * x), whichever is more, read
// every 10 ms by a sensor that shows the power of the 10 ms before: each reading comes with the
// intensity that ran then, or NaN where the job's own work was in it.
struct Gpu {
  double idle_w = 100, slope_w = 500;
  double shown = 100, shown_ran = 0;
  std::pair<double, double> read(double job_w, double x) {
    const double now = std::max(job_w, idle_w + slope_w * x);
    return {std::exchange(shown, now), std::exchange(shown_ran, job_w > 0 ? kNaN : x)};
  }
};

// A step of 150 ms at 700 W and a 50 ms gap at idle.
bool in_gap(int64_t t_ns) { return (t_ns / kMs) % 200 >= 150; }

FloorOptions floor400(bool marked = false) {
  FloorOptions o;
  o.floor_w = 400;
  o.marked = marked;
  return o;
}

// A reading, then a decision, at t.
double tick(FloorController& c, Gpu& gpu, int64_t t, double job_w, double x, bool gap = false) {
  const auto [w, ran] = gpu.read(job_w, x);
  c.observe(t, w, ran);
  return c.decide(t, gap);
}

struct JobRun {
  std::vector<double> power, intensity;
  std::vector<bool> gap;
};

JobRun run_job(FloorController& c, int steps) {
  Gpu gpu;
  JobRun r;
  double x = 0;
  for (int64_t t = 0; t < steps * 200 * kMs; t += 10 * kMs) {
    const bool g = in_gap(t);
    x = tick(c, gpu, t, g ? 0 : 700, x, g);
    r.power.push_back(gpu.shown);
    r.intensity.push_back(x);
    r.gap.push_back(g);
  }
  return r;
}

// With the job's marks: the filler runs in the gaps only, and after a few steps it holds the
// power within 5% of the floor there, from the gap's second reading on (the first is the one that
// starts it). Before the first mark the power decides.
TEST(FloorController, MarkedGapsAreFilledToTheFloor) {
  FloorController c(floor400(true));
  const JobRun r = run_job(c, 40);
  for (std::size_t i = 0; i < r.gap.size(); ++i) {
    if (!r.gap[i] && i > 15) {  // after the first mark
      EXPECT_EQ(r.intensity[i], 0) << i;
    } else if (i > r.gap.size() / 2 && r.gap[i - 1]) {
      EXPECT_NEAR(r.power[i], 400, 20) << i;
    }
  }
  EXPECT_NEAR(c.learned(), 0.6, 0.03);
}

// From the power alone: the first reading below the floor starts the filler, the first well above
// it stops it, and the gaps end up at the floor too.
TEST(FloorController, PowerAloneFindsTheGapsAndTheJobsReturn) {
  FloorController c(floor400());
  const JobRun r = run_job(c, 40);
  for (std::size_t i = r.gap.size() / 2; i < r.gap.size(); ++i) {
    // The sensor lags a reading: the gap is seen one reading late, and filled from the next.
    if (r.gap[i] && r.gap[i - 1] && r.gap[i - 2]) {
      EXPECT_GT(r.intensity[i], 0) << i;
      EXPECT_NEAR(r.power[i], 400, 20) << i;
    }
    if (!r.gap[i] && !r.gap[i - 1]) {
      EXPECT_EQ(r.intensity[i], 0) << i;
    }
  }
  EXPECT_NEAR(c.learned(), 0.6, 0.03);
}

// What a gap taught is where the next starts.
TEST(FloorController, TheNextGapStartsWhereTheLastLeftOff) {
  FloorController c(floor400(true));
  Gpu gpu;
  double x = 0, last = 0;
  for (int64_t t = 0; t < 200 * kMs; t += 10 * kMs) {
    x = tick(c, gpu, t, in_gap(t) ? 0 : 700, x, in_gap(t));
    if (x > 0) last = x;
  }
  EXPECT_EQ(c.decide(300 * kMs, false), 0);
  EXPECT_DOUBLE_EQ(c.decide(350 * kMs, true), last);
}

// Before the job the floor rises from the power found at the ramp's pace, and the power with it;
// the ramp teaches the floor's intensity.
TEST(FloorController, RampsUpAtItsPaceAndLearnsOnTheWay) {
  auto o = floor400();
  o.ramp_w_per_s = 100;
  FloorController c(o);
  c.ramp_up(0, 100);
  Gpu gpu;
  double x = 0, before = 100;
  int64_t t = 0;
  for (; c.phase(t) == FloorController::Phase::kRampUp; t += 10 * kMs) {
    const double target = c.target_w(t);
    x = tick(c, gpu, t, 0, x);
    EXPECT_NEAR(gpu.shown, target, 15) << t;
    EXPECT_LE(gpu.shown - before, 100 * 0.01 + 8) << t;  // W per 10 ms
    before = gpu.shown;
  }
  EXPECT_NEAR(static_cast<double>(t) * 1e-9, 3.0, 0.02);
  EXPECT_EQ(c.target_w(t), 400);
  tick(c, gpu, t, 0, x);
  EXPECT_NEAR(c.learned(), 0.6, 0.03);
}

// After the job the floor falls from the job's last power to nothing at the ramp's pace; then the
// controller is done and the filler stops. A filler that cannot draw the job's power steps down to
// its most at once, then holds it until the floor passes below.
TEST(FloorController, RampsDownFromTheJobsLastPower) {
  auto o = floor400();
  o.ramp_w_per_s = 200;
  o.start_intensity = 0.6;  // what the job's gaps taught
  FloorController c(o);
  c.ramp_down(0, 700);
  EXPECT_EQ(c.target_w(0), 700);
  EXPECT_EQ(c.target_w(1'000'000'000), 500);
  Gpu gpu;
  gpu.shown = 700;
  double x = c.decide(0), before = 700;
  int64_t t = 10 * kMs;
  for (; c.phase(t) == FloorController::Phase::kRampDown; t += 10 * kMs) {
    const double target = c.target_w(t);
    x = tick(c, gpu, t, 0, x);
    if (t > 10 * kMs) {
      EXPECT_GE(gpu.shown - before, -200 * 0.01 - 8) << t;
    }
    if (target < 580) {
      EXPECT_NEAR(gpu.shown, std::max(target, gpu.idle_w), 20) << t;
    }
    before = gpu.shown;
  }
  EXPECT_NEAR(static_cast<double>(t) * 1e-9, 3.5, 0.02);
  EXPECT_EQ(tick(c, gpu, t, 0, x), 0);
  EXPECT_EQ(c.phase(t + 1), FloorController::Phase::kDone);
}

// Without a ramp the phases pass at once.
TEST(FloorController, NoRampIsNoWait) {
  FloorController c(floor400());
  c.ramp_up(0, 100);
  EXPECT_EQ(c.phase(0), FloorController::Phase::kJob);
  c.ramp_down(5, 700);
  EXPECT_EQ(c.phase(5), FloorController::Phase::kDone);
  EXPECT_EQ(c.decide(5), 0);
}

// A reading that is no number teaches nothing and changes nothing.
TEST(FloorController, AMissingReadingChangesNothing) {
  FloorController c(floor400());
  c.observe(0, 100, 0);
  const double x = c.decide(0);
  EXPECT_GT(x, 0);
  c.observe(30 * kMs, kNaN, x);
  EXPECT_EQ(c.decide(30 * kMs), x);
  EXPECT_EQ(c.learned(), x);
}

// Readings that come in a batch, all of them of one intensity, teach it once: an integral step
// for each would count one error many times over (and run away).
TEST(FloorController, ABatchOfReadingsTeachesOnce) {
  FloorController c(floor400());
  c.observe(0, 100, 0);
  const double x = c.decide(0);
  for (int64_t t = 30 * kMs; t < 80 * kMs; t += 2 * kMs) c.observe(t, 250, x);
  const double next = c.decide(80 * kMs);
  EXPECT_NEAR(next, x + 0.5 * 150 / 400, 1e-12);
  // Nor does a reading of the intensity before, however late it comes.
  c.observe(90 * kMs, 250, x);
  EXPECT_EQ(c.decide(95 * kMs), next);
}

// A reading with the job's work in it (ran: NaN) teaches nothing.
TEST(FloorController, AReadingWithTheJobInItTeachesNothing) {
  FloorController c(floor400(true));
  const double x = c.decide(0, true);
  c.observe(50 * kMs, 700, kNaN);
  EXPECT_EQ(c.decide(55 * kMs, true), x);
  EXPECT_EQ(c.learned(), x);
}

// Marked, the power decides until the job's first mark (its start-up is filled), then the marks
// alone start and stop the filler, whatever the power says.
TEST(FloorController, MarksDecideOnceGiven) {
  FloorController c(floor400(true));
  c.observe(0, 100, 0);
  EXPECT_GT(c.decide(0, false), 0);
  c.observe(5 * kMs, 700, kNaN);
  EXPECT_EQ(c.decide(5 * kMs, false), 0);
  c.observe(10 * kMs, 700, kNaN);
  EXPECT_GT(c.decide(10 * kMs, true), 0);
  c.observe(20 * kMs, 100, kNaN);
  EXPECT_EQ(c.decide(20 * kMs, false), 0);
  c.observe(30 * kMs, 100, 0);
  EXPECT_EQ(c.decide(30 * kMs, false), 0);
}

// Marked, a low phase outside the marks that lasts (a checkpoint, the job's teardown) is filled
// from the power once it has lasted long_low_ns, until the job's power is back.
TEST(FloorController, ALongLowPhaseOutsideTheMarksIsFilledToo) {
  FloorController c(floor400(true));
  Gpu gpu;
  double x = c.decide(0, true);  // the first mark
  EXPECT_GT(x, 0);
  x = tick(c, gpu, 10 * kMs, 700, x, false);
  EXPECT_EQ(x, 0);
  int64_t t = 20 * kMs;
  for (; t < 260 * kMs; t += 10 * kMs) EXPECT_EQ(x = tick(c, gpu, t, 0, x), 0) << t;
  for (; t < 300 * kMs; t += 10 * kMs) x = tick(c, gpu, t, 0, x);
  EXPECT_GT(x, 0);
  for (; t < 1000 * kMs; t += 10 * kMs) x = tick(c, gpu, t, 0, x);
  EXPECT_NEAR(gpu.shown, 400, 20);
  tick(c, gpu, t, 700, x);
  EXPECT_EQ(tick(c, gpu, t + 10 * kMs, 700, x), 0);
}

// With a ramp, a long low phase falls from the job's level at the ramp's pace rather than at once,
// then holds the floor.
TEST(FloorController, ALongLowPhaseFallsAtTheRampsPace) {
  auto o = floor400(true);
  o.ramp_w_per_s = 100;
  FloorController c(o);
  Gpu gpu;
  gpu.slope_w = 700;  // the filler can draw the job's power
  double x = c.decide(0, true);
  int64_t t = 10 * kMs;
  for (; t < 2000 * kMs; t += 10 * kMs) x = tick(c, gpu, t, 700, x);
  for (; t < 2400 * kMs; t += 10 * kMs) x = tick(c, gpu, t, 0, x);
  double before = gpu.shown;
  for (; t < 6000 * kMs; t += 10 * kMs) {
    const double target = c.target_w(t);
    x = tick(c, gpu, t, 0, x);
    EXPECT_NEAR(gpu.shown, target, 25) << t;
    EXPECT_GE(gpu.shown - before, -100 * 0.01 - 10) << t;
    before = gpu.shown;
  }
  EXPECT_EQ(c.target_w(t), 400);
  EXPECT_NEAR(gpu.shown, 400, 10);
  EXPECT_NEAR(c.learned(), 300.0 / 700, 0.03);
}

TEST(FloorController, RefusesOptionsThatCannotWork) {
  const auto bad = [](auto edit) {
    auto o = floor400();
    edit(o);
    return testing::error_of([&] { FloorController c(o); });
  };
  EXPECT_NE(bad([](FloorOptions& o) { o.floor_w = 0; }).find("floor:"), std::string::npos);
  EXPECT_NE(bad([](FloorOptions& o) { o.floor_w = NAN; }).find("floor:"), std::string::npos);
  EXPECT_NE(bad([](FloorOptions& o) { o.ramp_w_per_s = 0.01; }).find("ramp:"), std::string::npos);
  EXPECT_NE(bad([](FloorOptions& o) { o.ramp_w_per_s = -1; }).find("ramp:"), std::string::npos);
  EXPECT_NE(bad([](FloorOptions& o) { o.back_off_w = -1; }).find("back-off:"), std::string::npos);
  EXPECT_NE(bad([](FloorOptions& o) { o.gain = 3; }).find("gain:"), std::string::npos);
  EXPECT_NE(bad([](FloorOptions& o) { o.start_intensity = 2; }).find("start intensity:"),
            std::string::npos);
  EXPECT_NE(bad([](FloorOptions& o) { o.long_low_ns = 0; }).find("long low phase:"),
            std::string::npos);
}

// A floor is W (to 100,000) or N% of the limit (to 100); anything else is refused naming the
// floor, and a share needs the GPU's limit.
TEST(Floor, ParsesWattsOrAShareOfTheLimit) {
  EXPECT_EQ(parse_floor("450").value, 450);
  EXPECT_FALSE(parse_floor("450").share);
  EXPECT_TRUE(parse_floor("60%").share);
  for (const char* bad : {"", "%", "0", "-5", "6x", "nan", "inf", "1e400", "101%", "200000"}) {
    try {
      parse_floor(bad);
      ADD_FAILURE() << "took '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.subject(), "floor") << bad;
    }
  }
  telemetry::DeviceInfo gpu;
  EXPECT_DOUBLE_EQ(floor_watts(parse_floor("300"), gpu), 300);
  EXPECT_THROW(floor_watts(parse_floor("60%"), gpu), Error);
  gpu.power_limit_mw = telemetry::Reading::of(700'000);
  EXPECT_DOUBLE_EQ(floor_watts(parse_floor("60%"), gpu), 420);
}

}  // namespace
}  // namespace powershape::shape
