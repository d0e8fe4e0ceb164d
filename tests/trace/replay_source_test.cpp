#include "powershape/trace/replay_source.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "powershape/telemetry/clock.hpp"

namespace powershape::trace {
using telemetry::Reading;
using telemetry::Signal;
using telemetry::Status;

TEST(ReplaySource, PlaysTheTraceInTimeAndHoldsTheEnd) {
  Trace t;
  for (int i = 0; i < 3; ++i) {
    Sample s;
    s.t_ns = 5'000'000'000 + i * 40'000'000LL;  // 0, 40, 80 ms
    s[Signal::kSmClock] = Reading::of(1980 - i * 100);
    t.samples.push_back(s);
  }
  Sample d;
  d.t_ns = 5'020'000'000;
  d[Signal::kDriverPower] = Reading::of(5);
  t.samples.push_back(d);
  ReplaySource src(t, "mem", 1.0);
  EXPECT_EQ(src.devices()[0].support[static_cast<std::size_t>(Signal::kPowerUsage)],
            Status::kNotSupported);
  EXPECT_EQ(src.poll(0, telemetry::all_signals())[Signal::kSmClock], Reading::of(1980));
  EXPECT_EQ(src.poll(0, telemetry::all_signals())[Signal::kPowerUsage].status,
            Status::kNotSupported);
  EXPECT_TRUE(src.drain(0).empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(src.poll(0, telemetry::all_signals())[Signal::kSmClock], Reading::of(1880));
  EXPECT_EQ(src.drain(0).size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(src.poll(0, telemetry::all_signals())[Signal::kSmClock], Reading::of(1780));
  EXPECT_EQ(src.poll(0, telemetry::all_signals())[Signal::kSmClock], Reading::of(1780));
}

// A replay far faster than real time (found by the trace fuzzer: the replay clock overflowed
// int64) reaches the end of the trace and holds its last readings.
TEST(ReplaySource, AnyReplaySpeedEndsAtTheTraceEnd) {
  Trace t;
  for (int i = 0; i < 3; ++i) {
    Sample s;
    s.t_ns = int64_t{i} * 4'000'000'000'000'000'000 - 4'000'000'000'000'000'000;
    s[Signal::kSmClock] = Reading::of(1980 - 100 * i);
    t.samples.push_back(s);
  }
  ReplaySource src(t, "fast", 1e15);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(src.poll(0, telemetry::all_signals())[Signal::kSmClock], Reading::of(1780));
}

// A trace's regions (a `cond` column, a recording's marks) come back once the replay passes their
// end, on the replay's clock: a region of the recording lasts as long in the replay.
TEST(ReplaySource, GivesTheTraceRegionsAsTheirEndsPass) {
  Trace t;
  for (int i = 0; i < 3; ++i) {
    Sample s;
    s.t_ns = 7'000'000'000 + i * 40'000'000LL;
    s[Signal::kSmClock] = Reading::of(1980);
    t.samples.push_back(s);
  }
  t.regions = {{"late", -1, 7'030'000'000, 7'080'000'000},
               {"early", -1, 7'000'000'000, 7'020'000'000}};
  const int64_t before = telemetry::steady_now_ns();
  ReplaySource src(t, "regions", 1.0);
  EXPECT_TRUE(src.take_regions().empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  auto first = src.take_regions();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].name, "early");
  EXPECT_NEAR(static_cast<double>(first[0].end_ns - first[0].begin_ns), 20e6, 1e3);
  EXPECT_GE(first[0].begin_ns, before);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  auto second = src.take_regions();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].name, "late");
  EXPECT_NEAR(static_cast<double>(second[0].begin_ns - first[0].begin_ns), 30e6, 1e3);
  EXPECT_TRUE(src.take_regions().empty());
}

TEST(ReplaySource, AnEmptyTraceIsRejected) {
  EXPECT_THROW(ReplaySource(Trace{}, "empty"), std::runtime_error);
}

}  // namespace powershape::trace
