#include "powershape/analysis/process_energy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>

#include "powershape/analysis/summary.hpp"

namespace powershape::analysis {
namespace {

using telemetry::Reading;
using telemetry::Signal;

constexpr int64_t kS = 1'000'000'000;

// A GPU read every 10 ms for `seconds`, drawing power_w(t) (an average-power reading), and with
// `energy` its counter too; the driver's per-process samples every 1/6 s from `busy(t)`.
trace::Trace recording(double seconds, const std::function<double(double)>& power_w,
                       const std::function<std::vector<std::pair<int64_t, int>>(double)>& busy,
                       bool energy = false) {
  trace::Trace t;
  t.devices.resize(1);
  double mj = 0;
  for (int64_t ns = 0; ns <= static_cast<int64_t>(seconds * kS); ns += 10'000'000) {
    const double s = static_cast<double>(ns) * 1e-9;
    telemetry::Sample x;
    x.t_ns = ns;
    x[Signal::kPowerUsage] = Reading::of(static_cast<int64_t>(power_w(s) * 1000));
    if (ns > 0) mj += power_w(s) * 10;  // W x 10 ms
    if (energy) x[Signal::kEnergy] = Reading::of(static_cast<int64_t>(mj));
    t.samples.push_back(x);
  }
  for (int64_t ns = kS / 6; ns <= static_cast<int64_t>(seconds * kS); ns += kS / 6)
    for (const auto& [pid, sm] : busy(static_cast<double>(ns) * 1e-9))
      t.processes.push_back({ns, 0, pid, sm, 0, "p" + std::to_string(pid)});
  return t;
}

// The split over the whole recording, its first sample to its last.
std::vector<ProcessEnergy> process_energy(const trace::Trace& t) {
  int64_t from = t.samples.front().t_ns, to = from;
  for (const auto& s : t.samples) {
    from = std::min(from, s.t_ns);
    to = std::max(to, s.t_ns);
  }
  return analysis::process_energy(t, from, to);
}

double joules_of(const std::vector<ProcessEnergy>& v, int64_t pid) {
  for (const auto& e : v)
    if (e.pid == pid) return e.joules;
  return -1;
}

TEST(ProcessEnergy, TwoProcessesShareAGpuByTheirBusyTime) {
  const auto t = recording(
      10, [](double) { return 400; },
      [](double) {
        return std::vector<std::pair<int64_t, int>>{{11, 75}, {22, 25}};
      });
  const auto v = process_energy(t);
  EXPECT_NEAR(joules_of(v, 11), 3000, 5);
  EXPECT_NEAR(joules_of(v, 22), 1000, 5);
  EXPECT_NEAR(joules_of(v, kNoProcess), 0, 1e-9);
  for (const auto& e : v)
    if (e.pid == 11) {
      EXPECT_EQ(e.name, "p11");
      EXPECT_NEAR(e.busy_s, 7.5, 0.2);  // 75% of 10 s
    }
}

TEST(ProcessEnergy, WhatRanWhenNoProcessWasBusyIsSaidApart) {
  // 4 s idle at 100 W, then 6 s of one process at 500 W.
  const auto t = recording(
      10, [](double s) { return s <= 4 ? 100.0 : 500.0; },
      [](double s) {
        return s <= 4 ? std::vector<std::pair<int64_t, int>>{{7, 0}}
                      : std::vector<std::pair<int64_t, int>>{{7, 90}};
      });
  const auto v = process_energy(t);
  EXPECT_NEAR(joules_of(v, 7), 3000, 10);
  EXPECT_NEAR(joules_of(v, kNoProcess), 400, 10);
}

TEST(ProcessEnergy, ThePartsAddUpToTheGpusEnergyAsTheSummaryHasIt) {
  // A counter whose total the power readings undercount by 10%: the counter sets the total.
  auto t = recording(
      8, [](double s) { return 200 + 100 * (static_cast<int>(s) % 2); },
      [](double s) {
        return std::vector<std::pair<int64_t, int>>{{1, s < 4 ? 60 : 20}, {2, 20}};
      },
      true);
  for (auto& x : t.samples)
    x[Signal::kPowerUsage] = Reading::of(x[Signal::kPowerUsage].value * 9 / 10);
  const auto v = process_energy(t);
  double sum = 0;
  for (const auto& e : v) sum += e.joules;
  const auto s = summarize(t);
  ASSERT_FALSE(s.empty());
  EXPECT_NEAR(sum, s.front().energy.energy_mj * 1e-3, 1);
  EXPECT_GT(joules_of(v, 1), joules_of(v, 2));
}

TEST(ProcessEnergyTally, RunningTotalsOnlyGrowAndEndWhereTheWholeDoes) {
  const auto t = recording(
      10, [](double s) { return 300 + 50 * (static_cast<int>(s) % 3); },
      [](double s) {
        return std::vector<std::pair<int64_t, int>>{{5, s < 6 ? 80 : 10}, {6, 30}};
      });
  ProcessEnergyTally tally;
  double before = 0;
  for (int64_t until = kS / 2; until <= 10 * kS; until += 700'000'000) {
    tally.add(t, until);
    double now = 0;
    for (const auto& e : tally.totals()) now += e.joules;
    EXPECT_GE(now, before - 1e-9);
    before = now;
  }
  EXPECT_LT(before, 3300);  // whole windows only: the last part second waits
  tally.add(t, INT64_MAX, true);
  const auto whole = process_energy(t);
  for (int64_t pid : {int64_t{5}, int64_t{6}}) {
    double sum = 0;
    for (const auto& e : tally.totals())
      if (e.pid == pid) sum += e.joules;
    EXPECT_NEAR(sum, joules_of(whole, pid), 0.01 * joules_of(whole, pid)) << pid;
  }
}

TEST(ProcessEnergyTally, IdleSpansWithoutSamplesStillAddUp) {
  // NVML gives no samples while nothing runs: a process for 3 s, then 5 s of nothing sampled. The
  // tally's parts still add up to the GPU's energy, the idle ones as "no process busy".
  const auto t = recording(
      8, [](double s) { return s <= 3 ? 500.0 : 100.0; },
      [](double s) {
        return s <= 3 ? std::vector<std::pair<int64_t, int>>{{4, 90}}
                      : std::vector<std::pair<int64_t, int>>{};
      });
  ProcessEnergyTally tally;
  for (int64_t until = kS; until <= 8 * kS; until += kS) tally.add(t, until);
  tally.add(t, INT64_MAX, true);
  double sum = 0;
  for (const auto& e : tally.totals()) sum += e.joules;
  EXPECT_NEAR(sum, 500 * 3 + 100 * 5, 10);
  EXPECT_NEAR(joules_of(tally.totals(), kNoProcess), 500, 10);
}

TEST(ProcessEnergyTally, AGpusLeastChargedProcessesFoldIntoOne) {
  // 180 short-lived processes (three new ones a sample): the 100 most charged stay apart, the
  // rest are "other processes", and nothing is lost.
  const auto t = recording(
      10, [](double) { return 400; },
      [](double s) {
        const int k = static_cast<int>(s * 6 + 0.5);
        return std::vector<std::pair<int64_t, int>>{
            {1000 + 3 * k, 1 + k % 90}, {1001 + 3 * k, 2 + k % 90}, {1002 + 3 * k, 3 + k % 90}};
      });
  ProcessEnergyTally tally;
  tally.add(t, INT64_MAX, true);
  const auto v = tally.totals();
  double sum = 0;
  int apart = 0;
  for (const auto& e : v) {
    sum += e.joules;
    apart += e.pid >= 0;
  }
  EXPECT_EQ(apart, static_cast<int>(ProcessEnergyTally::kMaxProcesses));
  EXPECT_GT(joules_of(v, kOtherProcesses), 0);
  EXPECT_NEAR(sum, 4000, 5);
}

TEST(ProcessEnergy, ASpanOfCenturiesIsSplitInBoundedWindows) {
  // A file's samples may lie at any times: INT64's ends apart, the split stays bounded and finite.
  trace::Trace t;
  t.devices.resize(1);
  for (int64_t ns : {INT64_MIN / 2, int64_t{0}, INT64_MAX / 2}) {
    telemetry::Sample x;
    x.t_ns = ns;
    x[Signal::kPowerUsage] = Reading::of(100'000);
    t.samples.push_back(x);
    t.processes.push_back({ns, 0, 9, 50, 0, "p"});
  }
  const auto v = process_energy(t);
  ASSERT_FALSE(v.empty());
  for (const auto& e : v) EXPECT_TRUE(std::isfinite(e.joules));
}

TEST(ProcessEnergy, NothingWithoutProcessSamples) {
  auto t = recording(
      3, [](double) { return 300; }, [](double) { return std::vector<std::pair<int64_t, int>>{}; });
  EXPECT_TRUE(process_energy(t).empty());
}

}  // namespace
}  // namespace powershape::analysis
