#include "powershape/monitor/session.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"

namespace powershape::monitor {
namespace {

// One GPU drawing a steady 100 W.
class SteadySource : public telemetry::Source {
 public:
  SteadySource() { infos_.resize(1); }
  std::string describe() const override { return "steady"; }
  const std::vector<telemetry::DeviceInfo>& devices() const override { return infos_; }
  telemetry::Sample poll(int gpu, const telemetry::SignalSet&) override {
    telemetry::Sample s;
    s.gpu = gpu;
    s.t_ns = telemetry::steady_now_ns();
    s[telemetry::Signal::kPowerUsage] = telemetry::Reading::of(100'000);
    return s;
  }

 private:
  std::vector<telemetry::DeviceInfo> infos_;
};

SessionOptions fast(std::vector<std::string> command) {
  SessionOptions o;
  o.sampler.period = std::chrono::milliseconds(2);
  o.command = std::move(command);
  o.turn_ms = 5;
  return o;
}

// The command's marks become regions, its readings the trace's and the CSV's, its exit code the
// session's; each turn calls back.
TEST(Session, RecordsACommandItsRegionsAndItsExitCode) {
  const auto csv = std::filesystem::temp_directory_path() / "powershape_session_test.csv";
  SteadySource source;
  auto o = fast({"sh", "-c",
                 "echo 'begin 1000 step' >\"$POWERSHAPE_CONTROL\"; sleep 0.05; "
                 "echo 'end 51000 step' >\"$POWERSHAPE_CONTROL\"; exit 3"});
  o.csv_path = csv.string();
  std::vector<std::string> warnings;
  Session s(source, o, [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_TRUE(s.start());
  int turns = 0;
  s.run([&] { ++turns; });
  EXPECT_EQ(s.finish(), 3);
  EXPECT_GT(turns, 0);
  ASSERT_EQ(s.trace().regions.size(), 1u);
  EXPECT_EQ(s.trace().regions[0].name, "step");
  EXPECT_EQ(s.trace().regions[0].begin_ns, 1000);
  EXPECT_EQ(s.trace().regions[0].end_ns, 51000);
  EXPECT_GT(s.trace().samples.size(), 5u);
  EXPECT_TRUE(warnings.empty());
  std::ifstream in(csv);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(all.find("step"), std::string::npos);
  std::filesystem::remove(csv);
}

// A source that places a region of its own (a replay's, the simulator's), once.
class RegionSource : public SteadySource {
 public:
  std::vector<telemetry::Region> take_regions() override { return std::exchange(regions_, {}); }

 private:
  std::vector<telemetry::Region> regions_{{"workload", -1, 1, 2}};
};

// Runs one after another under one sampler (the command backend's): each run's regions are the
// marks it closed, bounded, not the source's; one left open is dropped, not closed; its leftovers
// are killed; a deadline stops it.
TEST(Session, RunsCommandsOneAfterAnotherEachWithItsOwnRegions) {
  RegionSource source;
  std::vector<std::string> warnings;
  auto o = fast({});
  o.regions_in_trace = false;  // the command backend's: a run's regions come back, no other
  Session s(source, o, [&](const std::string& w) { warnings.push_back(w); });
  const auto a = s.run_command(
      {"sh", "-c",
       "for i in 1 2 3 4 5 6 7; do echo \"begin $i step\"; echo \"end $((i + 1)) step\"; done "
       ">\"$POWERSHAPE_CONTROL\"; echo 'begin 9 open' >\"$POWERSHAPE_CONTROL\"; "
       "sleep 61.25 & exit 4"},
      0, 3);
  EXPECT_EQ(a.exit_code, 4);
  EXPECT_EQ(a.stopped_ns, 0);
  ASSERT_EQ(a.regions.size(), 3u);  // the latest three of seven
  EXPECT_EQ(a.regions.front(), (telemetry::Region{"step", -1, 5, 6}));
  EXPECT_EQ(a.regions.back(), (telemetry::Region{"step", -1, 7, 8}));
  EXPECT_GE(a.end_ns, a.begin_ns);
  EXPECT_TRUE(s.trace().regions.empty());  // neither the marks nor the source's "workload"
  EXPECT_FALSE(s.region_open("open"));     // dropped with the run
  const auto b =
      s.run_command({"sh", "-c", "sleep 30"}, telemetry::steady_now_ns() + 200'000'000, 10);
  EXPECT_GT(b.stopped_ns, 0);
  EXPECT_LT(b.end_ns - b.begin_ns, 5'000'000'000);
  EXPECT_TRUE(b.regions.empty());
  EXPECT_GT(s.trace().samples.size(), 5u);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  EXPECT_NE(std::system("pgrep -f '^sleep 61.25$' >/dev/null"), 0);  // the leftover is gone
  s.finish();
}

// A region left open is closed at the end and named; finish() twice gives the same code.
TEST(Session, ClosesARegionLeftOpen) {
  SteadySource source;
  std::vector<std::string> warnings;
  Session s(source, fast({"sh", "-c", "echo 'begin 5 load' >\"$POWERSHAPE_CONTROL\""}),
            [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_TRUE(s.start());
  s.run();
  EXPECT_EQ(s.finish(), 0);
  EXPECT_EQ(s.finish(), 0);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("'load' began but never ended"), std::string::npos);
  ASSERT_EQ(s.trace().regions.size(), 1u);
}

// A command that cannot start: one reason, no turns, 127.
TEST(Session, ACommandThatCannotStartIs127) {
  SteadySource source;
  std::vector<std::string> warnings;
  Session s(source, fast({"/nonexistent/powershape-no-such-command"}),
            [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_FALSE(s.start());
  int turns = 0;
  s.run([&] { ++turns; });
  EXPECT_EQ(turns, 0);
  EXPECT_EQ(s.finish(), 127);
  ASSERT_EQ(warnings.size(), 1u);
}

// Without a command it records until a signal, and exits as the signal says.
TEST(Session, WithoutACommandRecordsUntilASignal) {
  SteadySource source;
  Session s(source, fast({}), [](const std::string&) {});
  ASSERT_TRUE(s.start());
  std::thread stop([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::raise(SIGTERM);
  });
  s.run();
  stop.join();
  EXPECT_EQ(s.finish(), 128 + SIGTERM);
  EXPECT_FALSE(s.trace().samples.empty());
}

TEST(Session, RefusesAnUnboundedTurn) {
  SteadySource source;
  auto o = fast({});
  o.turn_ms = 0;
  EXPECT_THROW(Session(source, o, [](const std::string&) {}), powershape::Error);
}

// A sampling period outside 0.1 ms to a minute, or a slow one shorter than it, is refused and
// named: the recording's cost and memory stay bounded.
TEST(Session, RefusesPeriodsThatWouldNotBound) {
  SteadySource source;
  const auto subject = [&](SessionOptions o) {
    try {
      Session s(source, o, [](const std::string&) {});
    } catch (const powershape::Error& e) {
      return e.subject();
    }
    return std::string("none");
  };
  auto o = fast({});
  o.sampler.period = std::chrono::microseconds(50);
  EXPECT_EQ(subject(o), "interval");
  o.sampler.period = std::chrono::minutes(2);
  EXPECT_EQ(subject(o), "interval");
  o.sampler.period = std::chrono::milliseconds(20);
  o.sampler.slow_period = std::chrono::milliseconds(10);
  EXPECT_EQ(subject(o), "slow-interval");
  o.sampler.slow_period = std::chrono::minutes(2);
  EXPECT_EQ(subject(o), "slow-interval");
}

}  // namespace
}  // namespace powershape::monitor
