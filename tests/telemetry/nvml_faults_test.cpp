// The driver's fault classes (DCGM's nvml-injection injects the same) through the fake
// libnvidia-ml: for each, NvmlSource and the Sampler go on, and the recorded trace and its
// summary stay right: the energy the summary takes from the counter agrees with the integral of
// the instantaneous power recorded beside it (what the replayed trace says the GPU drew).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include "powershape/analysis/energy.hpp"
#include "powershape/analysis/series.hpp"
#include "powershape/analysis/summary.hpp"
#include "powershape/telemetry/nvml_source.hpp"
#include "powershape/telemetry/sampler.hpp"

namespace powershape::telemetry {
namespace {

const char* kTrace = POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv";

struct Recording {
  double speed = 1;  // the replay's: the counter runs this much faster than the wall clock
  trace::Trace trace;
  analysis::Summary all;
  std::vector<Event> events;
};

// `ms` of the replay (the trace's load begins 0.3 s in; at speed 4 the first ~2 s of it),
// sampled every 2 ms, with these faults.
Recording record(const char* faults, int ms = 400, double speed = 4) {
  setenv("POWERSHAPE_FAKE_NVML_TRACE", kTrace, 1);
  setenv("POWERSHAPE_FAKE_NVML_SPEED", std::to_string(speed).c_str(), 1);
  setenv("POWERSHAPE_FAKE_NVML_FAULTS", faults, 1);
  NvmlSource src;
  SamplerOptions o;
  o.period = std::chrono::milliseconds(2);
  o.slow_period = std::chrono::milliseconds(2);
  o.slow_share = 2;  // the counter every 2 ms whatever it costs: the faults are what is tested
  o.drain_period = std::chrono::milliseconds(50);
  o.stall_after = std::chrono::milliseconds(100);
  Sampler s(src, o);
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  s.stop();
  Recording r;
  r.speed = speed;
  r.trace.devices = src.devices();
  r.trace.samples = s.take();
  r.events = s.take_events();
  r.all = analysis::summarize(r.trace).at(0);
  return r;
}

bool said(const Recording& r, const std::string& words) {
  return std::any_of(r.events.begin(), r.events.end(),
                     [&](const Event& e) { return e.what.find(words) != std::string::npos; });
}

double energy_j(const Recording& r) { return r.all.energy.energy_mj * 1e-3; }

// The yardstick: the instantaneous power integrated over the summary's window.
double power_j(const Recording& r) {
  return analysis::energy_from_power(analysis::series(r.trace, 0, Signal::kPowerInstant),
                                     r.all.begin_ns, r.all.end_ns)
             .energy_mj *
         1e-3;
}

// The counter's energy (in replay time, `speed` times the wall clock's) within 15% of the
// power's (the counter updates every ~100 ms of trace).
void expect_energy_right(const Recording& r, const char* what) {
  ASSERT_GT(power_j(r), 0) << what;
  EXPECT_NEAR(energy_j(r) / r.speed / power_j(r), 1, 0.15) << what;
}

class NvmlFaults : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { clean_ = record(""); }
  static Recording clean_;
};
Recording NvmlFaults::clean_;

TEST_F(NvmlFaults, ACleanRecordingAgreesWithItself) {
  EXPECT_GT(energy_j(clean_), 20);  // ~0.4 s at 100-700 W
  expect_energy_right(clean_, "clean");
  EXPECT_TRUE(clean_.events.empty());
}

// Any return code on a signal's call: that signal reads an error (said once), the rest go on;
// a fault that recovers after N calls reads again.
TEST_F(NvmlFaults, AnyReturnCodeAndOneThatRecovers) {
  for (const char* code : {"timeout", "no_permission", "insufficient_size", "unknown", "42"}) {
    Recording r = record(("code=clock:" + std::string(code) + ":60").c_str(), 300);
    EXPECT_NEAR(energy_j(r) / energy_j(clean_), 0.75, 0.2) << code;  // 300 of 400 ms
    int errors = 0, after = 0;
    for (const auto& s : r.trace.samples) {
      if (s[Signal::kSmClock].status == Status::kError) ++errors;
      if (errors > 0 && s[Signal::kSmClock].ok()) ++after;
    }
    if (std::string(code) == "no_permission") {  // what the process may not read is unsupported
      EXPECT_EQ(r.trace.devices[0].support[static_cast<std::size_t>(Signal::kSmClock)],
                Status::kNotSupported);
      continue;
    }
    EXPECT_GT(errors, 0) << code;
    EXPECT_TRUE(said(r, "sm_clock: ")) << code;
    EXPECT_GT(after, 10) << code << ": reads again after 60 failed calls";
    EXPECT_GT(r.all.sm_clock_mhz.mean, 0) << code;
  }
}

// Name, UUID and limits that fail leave the device described as unknown there, not unusable;
// a count that fails is one clear error.
TEST_F(NvmlFaults, FailuresInNameUuidLimitsAndCount) {
  setenv("POWERSHAPE_FAKE_NVML_TRACE", kTrace, 1);
  setenv("POWERSHAPE_FAKE_NVML_FAULTS",
         "code=name:unknown,code=uuid:timeout,code=power_limit:timeout", 1);
  {
    NvmlSource src;
    EXPECT_FALSE(src.devices()[0].power_limit_mw.ok());
    EXPECT_TRUE(src.poll(0, all_signals())[Signal::kPowerUsage].ok());
  }
  setenv("POWERSHAPE_FAKE_NVML_FAULTS", "code=count:timeout", 1);
  try {
    NvmlSource src;
    FAIL() << "a count that fails was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("NVML cannot count GPUs: ", 0), 0u) << e.what();
  }
}

// A GPU lost for a while and back: lost readings in between, said both ways, energy counted on.
TEST_F(NvmlFaults, ALostGpuThatComesBack) {
  Recording r = record("lost_after_ms=100,back_after_ms=200", 1600);
  EXPECT_TRUE(said(r, "GPU is lost"));
  EXPECT_TRUE(said(r, "GPU is back"));
  bool lost = false, back = false;
  for (const auto& s : r.trace.samples) {
    if (s[Signal::kPowerUsage].status == Status::kGpuLost) lost = true;
    if (lost && s[Signal::kPowerUsage].ok()) back = true;
  }
  EXPECT_TRUE(lost && back);
  expect_energy_right(r, "lost and back");
}

// Latency on one signal (the energy counter costs ~3 ms on an H200; here 20 ms): sampled less
// often, nothing lost, energy right.
TEST_F(NvmlFaults, PerSignalLatency) {
  Recording r = record("slow=energy:20000");
  expect_energy_right(r, "slow energy");
}

// A call that never returns: the watchdog leaves the GPU out with an event, stop() returns, and
// what was recorded before the hang is summarised.
TEST_F(NvmlFaults, ACallThatNeverReturns) {
  const auto t0 = std::chrono::steady_clock::now();
  Recording r = record("hang=power_usage:300", 600);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_TRUE(said(r, "has not returned"));
  EXPECT_LT(r.all.duration_s(), 0.45);  // what came before the hang, ~300 ms
  expect_energy_right(r, "a hang");
}

// An energy counter that restarts (a driver reload) and one that steps back by 1 mJ now and then:
// energy over the window as without the fault.
TEST_F(NvmlFaults, EnergyCounterResetsAndSmallBackwardSteps) {
  Recording reset = record("energy_reset_after_ms=200");
  EXPECT_TRUE(said(reset, "energy counter went back"));
  expect_energy_right(reset, "a reset");
  Recording jitter = record("energy_jitter");
  EXPECT_FALSE(said(jitter, "went back"));
  expect_energy_right(jitter, "jitter");
}

// A counter that leaps 2^60 mJ (a glitch: petawatts for a poll) is not counted, and a power
// reading of 4 MW is recorded as an error: what the summary says is what the GPU drew.
TEST_F(NvmlFaults, ReadingsBeyondAnyGpuAreNotBelieved) {
  Recording leap = record("energy_leap_after_ms=200");
  EXPECT_TRUE(said(leap, "energy counter leapt"));
  expect_energy_right(leap, "a leap");
  Recording glitch = record("power_glitch");
  EXPECT_TRUE(said(glitch, "power_usage_mw 4294967295 is beyond any GPU"));
  int errors = 0;
  for (const auto& s : glitch.trace.samples) {
    EXPECT_LT(s[Signal::kPowerUsage].value, 1'000'000);  // an H200's trace: under 1 kW
    if (s[Signal::kPowerUsage].status == Status::kError) ++errors;
  }
  EXPECT_GT(errors, 0);
}

// The driver's power buffer with repeats, reversed order, samples an hour ahead and at 0: each
// real sample is harvested once, in order; the odd ones are dropped and said once.
TEST_F(NvmlFaults, OddTimestampsInThePowerBuffer) {
  Recording r = record("odd_samples");
  EXPECT_TRUE(said(r, "dated"));
  std::vector<int64_t> t;
  for (const auto& s : r.trace.samples) {
    if (s[Signal::kDriverPower].ok()) t.push_back(s.t_ns);
  }
  ASSERT_GT(t.size(), 10u);
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  EXPECT_EQ(std::adjacent_find(t.begin(), t.end()), t.end()) << "a sample harvested twice";
  expect_energy_right(r, "odd samples");
}

}  // namespace
}  // namespace powershape::telemetry
