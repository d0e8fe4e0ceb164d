#include "powershape/analysis/recorder.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"

namespace powershape::analysis {
namespace {

using telemetry::Reading;
using telemetry::Signal;

// One GPU whose power rises by 1 W every 10 ms from 100 W, read at any moment: the energy of a
// window is the integral of a ramp.
class RampSource : public telemetry::Source {
 public:
  RampSource() : t0_(telemetry::steady_now_ns()) { devices_.resize(1); }
  std::string describe() const override { return "ramp"; }
  const std::vector<telemetry::DeviceInfo>& devices() const override { return devices_; }
  telemetry::Sample poll(int gpu, const telemetry::SignalSet&) override {
    telemetry::Sample s;
    s.gpu = gpu;
    s.t_ns = telemetry::steady_now_ns();
    s[Signal::kPowerInstant] = Reading::of(power_mw(s.t_ns));
    s[Signal::kSmClock] = Reading::of(1980);
    return s;
  }
  int64_t power_mw(int64_t t_ns) const { return 100'000 + (t_ns - t0_) / 10'000; }
  int64_t t0_;

 private:
  std::vector<telemetry::DeviceInfo> devices_;
};

}  // namespace

TEST(Recorder, ALongRegionKeepsItsTelemetryPastTheSamplersBuffer) {
  auto source = std::make_unique<RampSource>();
  RampSource& ramp = *source;
  telemetry::SamplerOptions o;
  o.period = std::chrono::milliseconds(2);
  o.capacity = 200;  // 0.4 s of rows; the region lasts 2.5 s
  Recorder r(std::move(source), o);
  const int64_t begin = telemetry::steady_now_ns();
  r.begin("long", begin);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  const int64_t end = telemetry::steady_now_ns();
  auto s = r.end("long", end);
  ASSERT_EQ(s.size(), 1u);
  // The ramp's integral, in mJ (mW x s).
  const double truth = 0.5 * static_cast<double>(ramp.power_mw(begin) + ramp.power_mw(end)) *
                       static_cast<double>(end - begin) * 1e-9;
  EXPECT_NEAR(s[0].energy.energy_mj, truth, 0.01 * truth);
  EXPECT_EQ(r.last("long")[0].energy.energy_mj, s[0].energy.energy_mj);
}

// 1000 W for its first 0.3 s, 100 W after.
class StepDownSource : public RampSource {
 public:
  telemetry::Sample poll(int gpu, const telemetry::SignalSet& w) override {
    auto s = RampSource::poll(gpu, w);
    s[Signal::kPowerInstant] = Reading::of(s.t_ns - t0_ < 300'000'000 ? 1'000'000 : 100'000);
    return s;
  }
};

// A region longer than the telemetry kept before the newest sample (10 s) keeps its start while
// its end waits for the polls after it: ending it must not let its own beginning go.
TEST(Recorder, ARegionLongerThanTheKeptMarginIsSummedWhole) {
  auto source = std::make_unique<StepDownSource>();
  const int64_t t0 = source->t0_;
  telemetry::SamplerOptions o;
  o.period = std::chrono::milliseconds(20);
  o.stretch = 1;  // every period polled, the steady 100 W too: the newest sample is recent
  Recorder r(std::move(source), o);
  r.begin("long", t0);
  std::this_thread::sleep_for(std::chrono::milliseconds(10800));
  // Ended a little ahead of the last poll, so end() waits and collects before it sums up.
  const int64_t end = telemetry::steady_now_ns() + 100'000'000;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto s = r.end("long", end);
  ASSERT_EQ(s.size(), 1u);
  const double truth_j = 1000 * 0.3 + 100 * (static_cast<double>(end - t0) * 1e-9 - 0.3);
  EXPECT_NEAR(s[0].energy.energy_mj * 1e-3, truth_j, 0.03 * truth_j);
}

TEST(Recorder, RegionsOverlapAndErrorsNameTheRegion) {
  Recorder r(std::make_unique<RampSource>(), {});
  const int64_t t = telemetry::steady_now_ns();
  r.begin("a", t);
  r.begin("b", t + 1'000'000);
  EXPECT_THROW(r.end("c", t + 2'000'000), powershape::Error);
  EXPECT_THROW(r.end("b", t), powershape::Error);    // before it began
  EXPECT_EQ(r.end("a", t + 30'000'000).size(), 1u);  // "b" stays open
  EXPECT_EQ(r.end("b", t + 40'000'000)[0].begin_ns, t + 1'000'000);
  EXPECT_THROW(r.begin("", t), powershape::Error);
  // Times no telemetry covers (before the recording, far ahead) are refused, naming t_ns.
  EXPECT_THROW(r.begin("early", -1), powershape::Error);
  EXPECT_THROW(r.begin("early", t - 5'000'000'000), powershape::Error);
  EXPECT_THROW(r.begin("late", t + 3600'000'000'000), powershape::Error);
  r.begin("c", t);
  EXPECT_THROW(r.end("c", int64_t{1} << 62), powershape::Error);
  EXPECT_TRUE(r.last("never").empty());
}

// No call makes a recording grow without bound: the open regions are capped (one more is refused,
// named), and so are the names whose last region is kept (the one ended longest ago goes).
TEST(Recorder, OpenRegionsAndTheLastOfEachNameAreBounded) {
  telemetry::SamplerOptions o;
  o.period = std::chrono::milliseconds(1);
  Recorder r(std::make_unique<RampSource>(), o);
  const int64_t t = telemetry::steady_now_ns();
  const std::size_t cap = telemetry::RegionStack<>::kMaxOpen;
  for (std::size_t i = 0; i < cap; ++i) r.begin("open", t);
  try {
    r.begin("one more", t);
    ADD_FAILURE() << "a region past the cap was opened";
  } catch (const powershape::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'one more': 1024 regions are open"), std::string::npos)
        << e.what();
  }
  for (std::size_t i = 0; i < cap; ++i) r.end("open", t + 1);
  r.begin("now free", t);
  // Ended in the past, each returns once the first poll is in.
  for (std::size_t i = 0; i <= Recorder::kMaxNames; ++i) {
    r.begin("step " + std::to_string(i), t);
    r.end("step " + std::to_string(i), t + 1);
  }
  EXPECT_TRUE(r.last("step 0").empty());  // the first of kMaxNames + 1 names is forgotten
  EXPECT_EQ(r.last("step 1").size(), 1u);
  EXPECT_EQ(r.last("step " + std::to_string(Recorder::kMaxNames)).size(), 1u);
  EXPECT_TRUE(r.last("open").empty());  // ended before them all
}

}  // namespace powershape::analysis
