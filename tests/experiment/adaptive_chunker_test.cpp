#include "powershape/experiment/adaptive_chunker.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "powershape/sim/simulator.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::experiment {
namespace {

// Step costs per chunk count with 0.5% noise; `change` switches to the second table.
struct FakeSteps {
  std::map<int, double> before, after;
  int change = 1 << 30;
  std::mt19937_64 rng{7};
  std::normal_distribution<double> noise{0, 0.005};
  double step(int step, int chunks) {
    return (step < change ? before : after).at(chunks) * 100 * (1 + noise(rng));
  }
};

// Runs `steps` steps; returns the count used at each, and after each its choice (-1 while
// exploring) in `choice`.
std::vector<int> drive(AdaptiveChunker& c, int steps, const std::function<double(int, int)>& cost,
                       double* total_ms = nullptr, std::vector<int>* choice = nullptr) {
  std::vector<int> used;
  for (int s = 0; s < steps; ++s) {
    const int k = c.next();
    const double ms = cost(s, k);
    if (total_ms != nullptr) *total_ms += ms;
    c.report(k, ms, ms * 0.5);
    used.push_back(k);
    if (choice != nullptr) choice->push_back(c.settled() ? c.best() : -1);
  }
  return used;
}

// The first step of [from, to) from which the choice holds, settled, to the end of it.
int settled_from(const std::vector<int>& choice, int from, int to) {
  const int last = choice[static_cast<std::size_t>(to - 1)];
  int at = to;
  for (int s = to - 1; s >= from && last != -1 && choice[static_cast<std::size_t>(s)] == last; --s)
    at = s;
  return at;
}

}  // namespace

TEST(AdaptiveChunker, ConvergesLosesLittleAndFollowsAChange) {
  FakeSteps env;
  env.before = {{1, 1.00}, {2, 0.98}, {4, 0.97}, {8, 0.99}, {16, 1.05}, {32, 1.2}, {64, 1.6}};
  env.after = {{1, 1.10}, {2, 1.06}, {4, 1.03}, {8, 0.99}, {16, 0.97}, {32, 1.0}, {64, 1.3}};
  env.change = 300;
  ChunkerOptions o;
  AdaptiveChunker c(o);
  double spent = 0;
  auto used = drive(
      c, 600, [&](int s, int k) { return env.step(s, k); }, &spent);
  // Converged on 4 within 50 steps, and it stayed there until the change (probes aside).
  int on4 = 0;
  for (int s = 50; s < 300; ++s) on4 += used[static_cast<std::size_t>(s)] == 4;
  EXPECT_GE(on4, 240);
  // Its first 200 steps cost at most 2% more than 4 chunks throughout would have.
  double first = 0;
  for (int s = 0; s < 200; ++s) first += env.before.at(used[static_cast<std::size_t>(s)]) * 100;
  EXPECT_LE(first / (200 * 0.97 * 100), 1.02);
  // After the change the best is 16: found within 50 steps and kept.
  int on16 = 0;
  for (int s = 350; s < 600; ++s) on16 += used[static_cast<std::size_t>(s)] == 16;
  EXPECT_GE(on16, 230) << "restarts " << c.restarts();
  EXPECT_EQ(c.best(), 16);
}

TEST(AdaptiveChunker, BadOptionsAreRefused) {
  ChunkerOptions o;
  o.arms = {};
  EXPECT_THROW(AdaptiveChunker{o}, powershape::Error);
  o.arms = {0, 2};
  EXPECT_THROW(AdaptiveChunker{o}, powershape::Error);
  AdaptiveChunker c({});
  EXPECT_THROW(c.report(1, 0, 1), powershape::Error);
}

// Counts near INT_MAX (a C caller's, a fuzzer's): the restart after a change keeps the counts
// within a factor of 4 of the best without overflowing (once: none kept, then a crash).
TEST(AdaptiveChunker, CountsNearTheTopOfIntRestartWithoutOverflow) {
  const int big = std::numeric_limits<int>::max();
  FakeSteps env;
  env.before = {{1 << 29, 1.0}, {1 << 30, 0.9}, {big, 1.0}};
  env.after = {{1 << 29, 2.0}, {1 << 30, 1.8}, {big, 1.9}};
  env.change = 150;
  ChunkerOptions o;
  o.arms = {1 << 29, 1 << 30, big};
  AdaptiveChunker c(o);
  std::vector<int> choice;
  const auto used = drive(
      c, 300, [&](int s, int k) { return env.step(s, k); }, nullptr, &choice);
  EXPECT_GE(c.restarts(), 1);
  EXPECT_EQ(c.best(), 1 << 30);
  EXPECT_EQ(choice.back(), 1 << 30);
  for (int k : {1 << 29, big})  // tried again after the change
    EXPECT_NE(std::find(used.begin() + 150, used.end(), k), used.end()) << k;
}

// Reports no GPU step could give are refused and change nothing: a negative or NaN energy (once a
// crash, or a silently wrong count), an infinite or NaN time, a count it does not choose from.
// Any order of such reports between good ones leaves the search where the good ones put it.
TEST(AdaptiveChunker, ReportsNoStepCouldGiveChangeNothing) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
  for (const auto& objective : {"time", "energy", "edp"}) {
    ChunkerOptions o;
    o.objective = parse_objective(objective, 700);
    AdaptiveChunker c(o), same(o);
    for (int step = 0; step < 60; ++step) {
      const int k = c.next();
      ASSERT_EQ(k, same.next());
      for (const auto& [chunks, ms, j] :
           {std::tuple{k, 10.0, -5.0}, std::tuple{k, 10.0, nan}, std::tuple{k, inf, 5.0},
            std::tuple{k, nan, 5.0}, std::tuple{k, -1.0, 5.0}, std::tuple{k, 10.0, 1e12},
            std::tuple{3, 10.0, 5.0}, std::tuple{-1, 10.0, 5.0}}) {
        EXPECT_THROW(c.report(chunks, ms, j), powershape::Error) << objective << " " << chunks;
      }
      const double ms = 10 + std::abs(k - 8) * 0.5, joules = ms * 0.5;
      c.report(k, ms, joules);
      same.report(k, ms, joules);
    }
    EXPECT_EQ(c.best(), same.best());
    EXPECT_EQ(c.steps(), 60);
  }
}

// On the simulator (dgx-spark and jetson-agx-orin, the LM head at 8192x896x151936), warmed for
// four heat-sink time constants (the Spark's thermal slowdown trips only once its sink is warm):
// settled within 50 steps; after the power limit drops to 60% (step 300) and the ambient rises by
// 20 C (step 600), settled again within 50 steps each; its first 200 steps within 2% of the best
// count's.
TEST(AdaptiveChunker, OnTheSimulatorSettlesAndResettlesAfterAPowerLimitAndAnAmbientStep) {
  for (const char* profile : {"dgx-spark", "jetson-agx-orin"}) {
    const sim::Profile p = sim::load_profile(profile);
    std::map<int, workload::Plan> plans;
    ChunkerOptions o;
    for (int a : o.arms) plans[a] = workload::lmhead_plan({8192, 896, 151936, true, 4, false}, a);
    sim::SimDevice dev(p, {});
    const double warm_s = 4 * p.tau_sink_s;
    dev.run(plans[1], 0, warm_s);
    AdaptiveChunker c(o);
    auto cost = [&](int s, int k) {
      if (s == 300) dev.set_power_limit_w(0.6 * p.power_limit_w);
      if (s == 600) dev.set_ambient_c(p.ambient_c + 20);
      const auto r = dev.run(plans[k], 1, 0);
      return static_cast<double>(r.end_ns - r.begin_ns) * 1e-6;
    };
    std::vector<int> choice;
    drive(c, 900, cost, nullptr, &choice);
    EXPECT_LE(settled_from(choice, 0, 300), 50) << profile;
    EXPECT_LE(settled_from(choice, 300, 600), 350) << profile;
    EXPECT_LE(settled_from(choice, 600, 900), 650) << profile;
    // The best count's first 200 steps, on a fresh device warmed the same way.
    double best_ms = 1e300;
    for (int a : o.arms) {
      sim::SimDevice ref(p, {});
      ref.run(plans[1], 0, warm_s);
      double ms = 0;
      for (int s = 0; s < 200; ++s) {
        const auto r = ref.run(plans[a], 1, 0);
        ms += static_cast<double>(r.end_ns - r.begin_ns) * 1e-6;
      }
      best_ms = std::min(best_ms, ms);
    }
    sim::SimDevice again(p, {});
    again.run(plans[1], 0, warm_s);
    AdaptiveChunker c2(o);
    double ours = 0;
    drive(
        c2, 200,
        [&](int, int k) {
          const auto r = again.run(plans[k], 1, 0);
          return static_cast<double>(r.end_ns - r.begin_ns) * 1e-6;
        },
        &ours);
    EXPECT_LE(ours / best_ms, 1.02) << profile;
  }
}

}  // namespace powershape::experiment
