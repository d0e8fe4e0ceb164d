// NvmlSource against the fake libnvidia-ml.so.1 (tests/fake_nvml), loaded through dlopen exactly
// as the real driver is.
#include "powershape/telemetry/nvml_source.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "powershape/telemetry/clock.hpp"

namespace powershape::telemetry {
namespace {

const char* kTrace = POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv";

class NvmlSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("POWERSHAPE_FAKE_NVML_TRACE", kTrace, 1);
    setenv("POWERSHAPE_FAKE_NVML_SPEED", "1", 1);
    unsetenv("POWERSHAPE_FAKE_NVML_FAULTS");
  }
  static void faults(const char* f) { setenv("POWERSHAPE_FAKE_NVML_FAULTS", f, 1); }
};

TEST_F(NvmlSourceTest, ReadsLimitsAndEverySignalTheTraceHas) {
  NvmlSource src;
  ASSERT_EQ(src.devices().size(), 1u);
  const DeviceInfo& d = src.devices()[0];
  EXPECT_EQ(d.name, "Fake H200 0");
  EXPECT_EQ(d.power_limit_mw, Reading::of(700000));
  EXPECT_EQ(d.max_sm_clock_mhz, Reading::of(1980));
  EXPECT_EQ(d.temp_gpu_max_c.status, Status::kNotSupported);
  Sample s = src.poll(0, all_signals());
  EXPECT_EQ(s[Signal::kPowerUsage], Reading::of(120129));  // the trace's first row
  EXPECT_EQ(s[Signal::kPowerInstant], Reading::of(120315));
  EXPECT_EQ(s[Signal::kSmClock], Reading::of(1980));
  EXPECT_EQ(s[Signal::kEnergy], Reading::of(3464732));
  EXPECT_EQ(s[Signal::kGpuTemp], Reading::of(35));
  // The trace has no memory clock: unsupported, said so, never a zero.
  EXPECT_EQ(s[Signal::kMemClock].status, Status::kNotSupported);
  EXPECT_EQ(d.support[static_cast<std::size_t>(Signal::kMemClock)], Status::kNotSupported);
}

// Blackwell's power smoothing is recorded where the GPU has it, and unsupported elsewhere.
TEST_F(NvmlSourceTest, RecordsPowerSmoothingWhereTheGpuHasIt) {
  {
    // The fake answers the active profile field with 0 here, as an H100 with driver 580 does:
    // without the state, it is no signal.
    NvmlSource h100;
    const Sample s = h100.poll(0, all_signals());
    for (Signal sig : {Signal::kSmoothingEnabled, Signal::kSmoothingProfile,
                       Signal::kSmoothingFloor, Signal::kSmoothingCeiling}) {
      EXPECT_EQ(s[sig].status, Status::kNotSupported) << column_name(sig);
      EXPECT_EQ(h100.devices()[0].support[static_cast<std::size_t>(sig)], Status::kNotSupported)
          << column_name(sig);
    }
  }
  const std::string file = testing::TempDir() + "powershape_smoothing_" + std::to_string(getpid());
  // GPU 0 on, profile 2 at a 50% floor (fake_smoothing.hpp's line format).
  std::ofstream(file) << "0 1 2 20 1000 500 100 20 1000 500 100 50 1000 500 100 20 1000 500 100 "
                         "20 1000 500 100\n";
  setenv("POWERSHAPE_FAKE_NVML_SMOOTHING", file.c_str(), 1);
  NvmlSource gb200;
  const Sample s = gb200.poll(0, all_signals());
  unsetenv("POWERSHAPE_FAKE_NVML_SMOOTHING");
  std::remove(file.c_str());
  EXPECT_EQ(s[Signal::kSmoothingEnabled], Reading::of(1));
  EXPECT_EQ(s[Signal::kSmoothingProfile], Reading::of(2));
  EXPECT_EQ(s[Signal::kSmoothingFloor], Reading::of(350));  // 50% of 700 W
  EXPECT_EQ(s[Signal::kSmoothingCeiling], Reading::of(700));
  EXPECT_EQ(column_name(Signal::kSmoothingFloor), "smoothing_floor_w");
  EXPECT_EQ(column_name(Signal::kSmoothingEnabled), "smoothing_enabled");
}

TEST_F(NvmlSourceTest, AnUnsupportedFieldIsMarkedAndNotAskedAgain) {
  faults("unsupported=power_instant");
  NvmlSource src;
  EXPECT_EQ(src.devices()[0].support[static_cast<std::size_t>(Signal::kPowerInstant)],
            Status::kNotSupported);
  Sample s = src.poll(0, all_signals());
  EXPECT_EQ(s[Signal::kPowerInstant].status, Status::kNotSupported);
  EXPECT_TRUE(s[Signal::kPowerUsage].ok());
}

TEST_F(NvmlSourceTest, AnErrorIsAnErrorReading) {
  faults("error=sm_clock");
  NvmlSource src;
  EXPECT_EQ(src.poll(0, all_signals())[Signal::kSmClock].status, Status::kError);
}

TEST_F(NvmlSourceTest, ALostGpuReadsLostFromThenOn) {
  faults("lost_after_ms=30");
  NvmlSource src;
  EXPECT_TRUE(src.poll(0, all_signals())[Signal::kPowerUsage].ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  Sample s = src.poll(0, all_signals());
  for (std::size_t i = 0; i < kSignalCount; ++i) {
    if (i == static_cast<std::size_t>(Signal::kDriverPower)) continue;
    if (src.devices()[0].support[i] != Status::kOk) continue;
    EXPECT_EQ(s.readings[i].status, Status::kGpuLost) << spec(static_cast<Signal>(i)).name;
  }
  EXPECT_TRUE(src.drain(0).empty());
  EXPECT_EQ(src.poll(0, all_signals())[Signal::kSmClock].status, Status::kGpuLost);
}

TEST_F(NvmlSourceTest, AnEnergyCounterWrapIsUnwrappedAndRecorded) {
  faults("energy_wrap");
  setenv("POWERSHAPE_FAKE_NVML_SPEED", "20", 1);  // the trace's first second of load in 50 ms
  NvmlSource src;
  int64_t last = src.poll(0, all_signals())[Signal::kEnergy].value;
  std::vector<Event> events;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    Reading r = src.poll(0, all_signals())[Signal::kEnergy];
    ASSERT_TRUE(r.ok());
    EXPECT_GE(r.value, last);
    last = r.value;
    for (auto& e : src.take_events()) events.push_back(e);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].what, "energy counter went back; continued");
  EXPECT_GT(last, 1000);  // past the wrap, still counting up
}

TEST_F(NvmlSourceTest, HarvestsEveryDriverPowerSample) {
  NvmlSource src;
  std::vector<Sample> rows;
  // Drain rarely: the driver keeps 120 samples at 20 ms, so nothing may be lost.
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    for (auto& s : src.drain(0)) rows.push_back(s);
  }
  ASSERT_GE(rows.size(), 20u);
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(rows[i].t_ns - rows[i - 1].t_ns), 20e6, 1e3) << i;
    EXPECT_TRUE(rows[i][Signal::kDriverPower].ok());
  }
}

// How far back a drain reaches is read from the driver's buffer at start (the fake's: 120 samples
// 20 ms apart); samples dated 0 or in the future do not stretch it; no buffer, no depth.
TEST_F(NvmlSourceTest, KnowsHowFarBackTheDriversBufferReaches) {
  EXPECT_NEAR(static_cast<double>(NvmlSource().buffer_ns(0)), 2.4e9, 1e6);
  faults("odd_samples");
  EXPECT_NEAR(static_cast<double>(NvmlSource().buffer_ns(0)), 2.4e9, 0.1e9);
  faults("no_samples");
  EXPECT_EQ(NvmlSource().buffer_ns(0), 0);
}

// A buffer drained too late (the fake's holds 2.4 s) says how much of it is missing.
TEST_F(NvmlSourceTest, ABufferThatWrappedBeforeItWasDrainedIsSaid) {
  NvmlSource src;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_FALSE(src.drain(0).empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_FALSE(src.drain(0).empty());
  EXPECT_TRUE(src.take_events().empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  ASSERT_FALSE(src.drain(0).empty());
  const auto events = src.take_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].what.find("ms of the driver's power samples are missing"), std::string::npos)
      << events[0].what;
}

// A driver that skips a step now and then, drained every 40 ms (as `smooth` does), loses nothing
// and says nothing.
TEST_F(NvmlSourceTest, ASkippedStepBetweenFrequentDrainsIsNoWrap) {
  faults("skipped_samples");
  NvmlSource src;
  std::size_t rows = 0;
  for (int i = 0; i < 25; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    rows += src.drain(0).size();
  }
  EXPECT_GT(rows, 30u);
  EXPECT_TRUE(src.take_events().empty());
}

double thread_cpu_ms() { return static_cast<double>(telemetry::thread_cpu_ns()) * 1e-6; }

// The fake can cost what a driver costs, in the caller's CPU (a sleep costs none): cpu=FUNC:US,
// and h200_costs (the energy counter 2.9 ms, a buffer fetch 0.7 ms, ...), which the sampler's
// node measurements stand on.
TEST_F(NvmlSourceTest, AFakeCallCanBurnTheCallersCpuAsTheDriversDo) {
  const auto cpu_of = [](auto&& f) {
    const double t = thread_cpu_ms();
    f();
    return thread_cpu_ms() - t;
  };
  SignalSet energy;
  energy.set(static_cast<std::size_t>(Signal::kEnergy));
  faults("cpu=energy:3000");
  NvmlSource a;
  EXPECT_GE(cpu_of([&] { a.poll(0, energy); }), 2.9);
  faults("h200_costs");
  NvmlSource b;
  EXPECT_GE(cpu_of([&] { b.poll(0, energy); }), 2.8);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_GE(cpu_of([&] { b.drain(0); }), 0.69);
  SignalSet plain;
  plain.set(static_cast<std::size_t>(Signal::kPowerUsage));
  EXPECT_LT(cpu_of([&] { b.poll(0, plain); }), 1.0);
}

TEST_F(NvmlSourceTest, SlowCallsAreSurvived) {
  faults("slow_us=2000");
  NvmlSource src;
  auto t0 = std::chrono::steady_clock::now();
  Sample s = src.poll(0, all_signals());
  EXPECT_GT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(10));
  EXPECT_TRUE(s[Signal::kPowerUsage].ok());
}

// The GPUs a job sees (CUDA_VISIBLE_DEVICES) are the ones watched, unless named (--gpus).
TEST_F(NvmlSourceTest, WatchesTheGpusCudaVisibleDevicesNames) {
  setenv("POWERSHAPE_FAKE_NVML_GPUS", "4", 1);
  setenv("CUDA_VISIBLE_DEVICES", "GPU-fake-3,1", 1);
  std::vector<int> seen;
  const NvmlSource visible;
  for (const auto& d : visible.devices()) seen.push_back(d.index);
  EXPECT_EQ(seen, (std::vector<int>{3, 1}));
  EXPECT_EQ(NvmlSource({0}).devices().at(0).index, 0);
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_EQ(NvmlSource().devices().size(), 4u);
  unsetenv("POWERSHAPE_FAKE_NVML_GPUS");
}

TEST_F(NvmlSourceTest, NoDriverIsOneClearLine) {
  faults("no_driver");
  try {
    NvmlSource src;
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "no NVIDIA driver: nvmlInit failed (Driver Not Loaded)");
  }
}

TEST_F(NvmlSourceTest, AMissingLibraryIsOneClearLine) {
  try {
    NvmlSource src({}, "libnvidia-ml-does-not-exist.so.1");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("no NVIDIA driver: cannot load", 0), 0u);
  }
}

TEST_F(NvmlSourceTest, AnUnknownGpuIndexIsRejected) {
  try {
    NvmlSource src({3});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "no GPU 3: NVML sees 1 (0..0)");
  }
}

}  // namespace
}  // namespace powershape::telemetry
