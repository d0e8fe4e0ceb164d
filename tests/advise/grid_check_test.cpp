// Grid checks of runs and of predicted settings on a synthetic square wave with known answers.
#include "powershape/advise/grid_check.hpp"

#include <gtest/gtest.h>

namespace powershape::advise {
namespace {

using telemetry::Reading;
using telemetry::Signal;

// GPU 0 at `lo` W and `hi` W alternately, 250 ms each (a 2 Hz square wave), read every 10 ms.
trace::Trace square(double seconds, double lo, double hi) {
  trace::Trace t;
  telemetry::DeviceInfo d;
  d.power_limit_mw = Reading::of(700000);
  t.devices.push_back(d);
  for (int i = 0; i * 0.01 < seconds; ++i) {
    telemetry::Sample s;
    s.t_ns = static_cast<int64_t>(i) * 10'000'000;
    s[Signal::kPowerInstant] =
        Reading::of(static_cast<int64_t>(((i / 25) % 2 == 0 ? hi : lo) * 1000));
    t.samples.push_back(s);
  }
  return t;
}

// The range alone, in W, over 2 s windows.
analysis::GridSpec range_spec(double max_w) {
  return analysis::grid_spec_from_json(
      {{"name", "test"},
       {"source", "a test"},
       {"range", {{"window_s", 2}, {"max_w", max_w}, {"source", "a test"}}}});
}

const analysis::Verdict& range_of(const GridCheck& c) {
  for (const auto& v : c.verdicts)
    if (v.limit == "range") return v;
  throw std::runtime_error("no range verdict");
}

TEST(GridCheck, ARunsRangeAndTheWorstOfSeveralRuns) {
  trace::Trace t = square(10, 200, 700);
  const GridCheck one = check_runs("x", t, {{0, 4'000'000'000}}, range_spec(600), 1);
  EXPECT_TRUE(one.pass());
  EXPECT_NEAR(range_of(one).measured, 500, 1);
  // A second run whose trough is lower: the check keeps it.
  for (auto& s : t.samples)
    if (s.t_ns >= 5'000'000'000 && s[Signal::kPowerInstant].value == 200000)
      s[Signal::kPowerInstant] = Reading::of(50000);
  const GridCheck two =
      check_runs("x", t, {{0, 4'000'000'000}, {5'000'000'000, 9'000'000'000}}, range_spec(600), 1);
  EXPECT_FALSE(two.pass());
  EXPECT_NEAR(range_of(two).measured, 650, 1);
  EXPECT_EQ(two.exceeded(), std::vector<std::string>{"range"});
  // Scaled to 100 GPUs in step.
  EXPECT_NEAR(range_of(check_runs("x", t, {{0, 4'000'000'000}}, range_spec(1e5), 100)).measured,
              50000, 100);
}

TEST(GridCheck, ARunWithoutReadingsIsNotKnownToBeWithin) {
  const trace::Trace t = square(1, 200, 700);
  const GridCheck c = check_runs("x", t, {{5'000'000'000, 6'000'000'000}}, range_spec(600), 1);
  EXPECT_FALSE(c.pass());
  ASSERT_EQ(c.exceeded().size(), 1u);
  EXPECT_EQ(c.exceeded()[0].rfind("not analysed", 0), 0u) << c.exceeded()[0];
}

TEST(GridCheck, APowerLimitClipsThePeaksAClockCapScalesThem) {
  const trace::Trace t = square(10, 200, 700);
  Outcome base;
  base.mean_power_w = 450;
  Outcome limit = base;
  limit.setting = Setting(0, 500);
  const GridCheck l = check_predicted(t, 0, 9'000'000'000, base, limit, range_spec(400), 1);
  EXPECT_TRUE(l.predicted);
  EXPECT_NEAR(range_of(l).measured, 300, 1);  // 500 - 200
  EXPECT_TRUE(l.pass());
  Outcome cap = base;
  cap.setting = Setting(1200, 0);
  cap.mean_power_w = 325;  // half the power above the trough
  const GridCheck c = check_predicted(t, 0, 9'000'000'000, base, cap, range_spec(200), 1);
  EXPECT_NEAR(range_of(c).measured, 250, 1);
  EXPECT_FALSE(c.pass());
  EXPECT_EQ(to_json(c)["exceeded"][0], "range");
}

}  // namespace
}  // namespace powershape::advise
