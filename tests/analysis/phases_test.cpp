#include "powershape/analysis/phases.hpp"

#include <gtest/gtest.h>

#include "powershape/sim/simulator.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::analysis {
namespace {

trace::Trace simulated(const workload::Workload& w, double seconds) {
  const sim::Profile p = sim::load_profile("h200");
  sim::SimOptions o;
  o.seconds = seconds;
  o.lead_in_s = 2;
  o.tail_s = 0;
  o.step_s = 5e-4;
  const auto plan = workload::make_plan(w, {p.peak_flops_per_s(), p.peak_bytes_per_s()});
  return sim::simulate(p, plan, o).trace;
}

PhaseClass majority(const std::vector<PhaseWindow>& w, int64_t from_ns) {
  int count[kPhaseClassCount] = {};
  for (const auto& x : w)
    if (x.begin_ns >= from_ns) ++count[static_cast<int>(x.cls)];
  int best = 0;
  for (int c = 1; c < kPhaseClassCount; ++c)
    if (count[c] > count[best]) best = c;
  return static_cast<PhaseClass>(best);
}

int64_t workload_begin(const trace::Trace& t) {
  for (const auto& r : t.regions)
    if (r.name == "workload") return r.begin_ns;
  return 0;
}

}  // namespace

TEST(Phases, ClassesWhatBoundTheGpu) {
  {  // back-to-back products: compute-bound; the idle lead-in: idle
    const auto t = simulated({workload::Products{4096}}, 6);
    const auto w = classify_phases(t, 0);
    EXPECT_EQ(w.front().cls, PhaseClass::kIdle);
    EXPECT_EQ(majority(w, workload_begin(t)), PhaseClass::kCompute);
  }
  {  // short bursts between long memory streams: memory-bound (the stream keeps memory busy)
    const auto t = simulated({workload::Square{5, 0.2, workload::Gap::kMemory}}, 6);
    EXPECT_EQ(majority(classify_phases(t, 0), workload_begin(t)), PhaseClass::kMemory);
  }
  {  // 400 ms bursts and gaps: power swings inside each 1 s window
    const auto t = simulated({workload::Square{400, 0.5, workload::Gap::kIdle}}, 8);
    EXPECT_EQ(majority(classify_phases(t, 0), workload_begin(t)), PhaseClass::kBursty);
  }
}

// A training step mixes products with memory-bound kernels faster than NVML's utilisation
// resolves: the H200 measured its memory controller 52-61% busy at the 700 W cap, where a memory
// stream alone draws ~460 W: such a window is bound by the SMs' power. The same memory share
// without the cap is memory-bound, and so is a stream that reaches the cap (memory 90% busy).
TEST(Phases, AMixedWindowAtThePowerCapIsComputeBoundAStreamIsNot) {
  auto t = simulated({workload::Products{4096}}, 4);
  const auto with = [&](int64_t util_mem, int64_t reasons) {
    for (auto& row : t.samples) {
      row[telemetry::Signal::kUtilMem] = telemetry::Reading::of(util_mem);
      row[telemetry::Signal::kReasons] = telemetry::Reading::of(reasons);
    }
    return majority(classify_phases(t, 0), workload_begin(t));
  };
  EXPECT_EQ(with(58, telemetry::reason::kSwPowerCap), PhaseClass::kCompute);
  EXPECT_EQ(with(58, 0), PhaseClass::kMemory);
  EXPECT_EQ(with(90, telemetry::reason::kSwPowerCap), PhaseClass::kMemory);
}

TEST(Phases, SharesAddUpToTheRecording) {
  const auto t = simulated({workload::Products{4096}}, 4);
  const auto w = classify_phases(t, 0, {.window_s = 0.3});
  double secs = 0, joules = 0;
  for (const auto& x : w) {
    secs += x.seconds();
    joules += x.energy_j;
    EXPECT_GE(x.util_gpu_pct, 0);  // the simulator reports utilisation
  }
  const auto s = phase_shares(w);
  ASSERT_EQ(s.size(), 4u);
  double s_secs = 0, s_joules = 0;
  int windows = 0;
  for (const auto& x : s) {
    s_secs += x.seconds;
    s_joules += x.energy_j;
    windows += x.windows;
  }
  EXPECT_EQ(windows, static_cast<int>(w.size()));
  EXPECT_NEAR(s_secs, secs, 1e-9);
  EXPECT_NEAR(s_joules, joules, 1e-6);
  EXPECT_GT(s[static_cast<int>(PhaseClass::kCompute)].energy_j, 0.5 * joules);
}

TEST(Phases, WithoutUtilisationIdleIsLowPower) {
  auto t = simulated({workload::Products{4096}}, 4);
  for (auto& row : t.samples) {
    row[telemetry::Signal::kUtilGpu] = telemetry::Reading::failed(telemetry::Status::kNotSupported);
    row[telemetry::Signal::kUtilMem] = telemetry::Reading::failed(telemetry::Status::kNotSupported);
  }
  const auto w = classify_phases(t, 0);
  EXPECT_EQ(w.front().cls, PhaseClass::kIdle);
  EXPECT_EQ(w.front().util_gpu_pct, -1);
  EXPECT_EQ(majority(w, workload_begin(t)), PhaseClass::kCompute);
}

TEST(Phases, RefusesWhatItCannotClass) {
  const auto t = simulated({workload::Products{4096}}, 1);
  EXPECT_THROW(classify_phases(t, 0, {.window_s = 0.001}), powershape::Error);
  EXPECT_THROW(classify_phases(t, 0, {.window_s = 1e9}), powershape::Error);
  EXPECT_THROW(classify_phases(t, 3), std::runtime_error);  // no such GPU: no power readings
}

}  // namespace powershape::analysis
