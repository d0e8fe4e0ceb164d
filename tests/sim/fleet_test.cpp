#include "powershape/sim/fleet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "powershape/analysis/spectrum.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::sim {
namespace {

// 80 ms of products near a 700 W limit, then 20 ms of memory-bound work, at 1 ms.
RankStep test_rank() {
  RankStep r;
  r.dt_s = 1e-3;
  r.compute_w.assign(80, 690.0);
  r.compute_w.insert(r.compute_w.end(), 20, 300.0);
  r.comm_w = 150;
  r.idle_w = 70;
  return r;
}

double mean_between(const analysis::PowerSeries& p, double from_s, double to_s) {
  double sum = 0;
  int n = 0;
  for (std::size_t i = 0; i < p.w.size(); ++i) {
    const double t = (static_cast<double>(i) + 0.5) * p.dt_s;
    if (t >= from_s && t < to_s) {
      sum += p.w[i];
      ++n;
    }
  }
  return sum / n;
}

// The same job with every rank drawn and added, one by one: what the aggregate stands for.
struct Explicit {
  analysis::PowerSeries power;
  double mean_step_s = 0;
};
Explicit explicit_sum(const RankStep& r, const FleetOptions& o) {
  std::mt19937_64 rng(o.seed + 99);
  std::normal_distribution<double> z(0, 1);
  std::bernoulli_distribution straggles(o.straggler_share);
  std::vector<double> fine;
  auto hold = [&](double w, double s) {
    fine.insert(fine.end(), static_cast<std::size_t>(std::llround(s / r.dt_s)), w);
  };
  const double n = static_cast<double>(o.gpus);
  hold(n * r.idle_w, o.lead_in_s);
  int steps = 0;
  std::vector<double> f(static_cast<std::size_t>(o.gpus));
  while (static_cast<double>(fine.size()) * r.dt_s < o.lead_in_s + o.seconds) {
    for (auto& x : f) x = 1 + (straggles(rng) ? o.straggler_slowdown : 0) + o.jitter * z(rng);
    const double worst = *std::max_element(f.begin(), f.end());
    const auto span = static_cast<std::size_t>(std::ceil(r.seconds() * worst / r.dt_s));
    for (std::size_t k = 0; k < span; ++k) {
      double w = 0;
      for (double x : f) {
        const double own = (static_cast<double>(k) + 0.5) * r.dt_s / x;
        w += own >= r.seconds() ? r.comm_w : r.compute_w[static_cast<std::size_t>(own / r.dt_s)];
      }
      fine.push_back(w);
    }
    hold(n * r.comm_w, o.allreduce_s);
    ++steps;
  }
  Explicit e;
  e.mean_step_s = (static_cast<double>(fine.size()) * r.dt_s - o.lead_in_s) / steps;
  hold(n * r.idle_w, o.tail_s);
  e.power = {0, r.dt_s, fine};
  return e;
}

}  // namespace

TEST(Fleet, WithoutJitterEachStepIsComputeThenTheAllReduce) {
  FleetOptions o;
  o.gpus = 1000;
  o.seconds = 10;
  o.lead_in_s = 1;
  o.tail_s = 1;
  o.resolution_s = 1e-3;
  o.allreduce_s = 0.03;
  o.jitter = 0;
  const Fleet f = simulate_fleet(test_rank(), o);
  EXPECT_NEAR(f.mean_step_s, 0.13, 0.002);
  EXPECT_NEAR(f.slowest_mean, 1, 1e-4);
  const auto [lo, hi] = std::minmax_element(f.power.w.begin(), f.power.w.end());
  EXPECT_NEAR(*hi, 690e3, 1);
  EXPECT_NEAR(*lo, 70e3, 1);  // idle before and after
  EXPECT_NEAR(f.power.w[static_cast<std::size_t>(1.115 / 1e-3)], 150e3, 1);  // the first all-reduce
  EXPECT_NEAR(analysis::repeat_period_s(
                  std::vector<double>(f.power.w.begin() + 1000, f.power.w.end() - 1000), 1e-3),
              0.13, 0.002);
  // Energy: the idle ends, then each step's 80 x 690 + 20 x 300 + 30 x 150 J a GPU-ms.
  const double step_j = (80 * 690.0 + 20 * 300.0 + 30 * 150.0) * 1e-3 * 1000;
  EXPECT_NEAR(f.energy_j, 2 * 70e3 + f.steps * step_j, 0.01 * f.energy_j);
}

TEST(Fleet, MatchesAnExplicitSumOverRanks) {
  FleetOptions o;
  o.gpus = 300;
  o.seconds = 40;
  o.lead_in_s = 0.5;
  o.tail_s = 0.5;
  o.resolution_s = 1e-3;
  o.allreduce_s = 0.03;
  o.jitter = 0.03;
  o.straggler_share = 0.01;
  o.straggler_slowdown = 0.2;
  const RankStep r = test_rank();
  const Fleet f = simulate_fleet(r, o);
  const Explicit e = explicit_sum(r, o);
  // The slowest of 300 ranks with 1% stragglers 20% slow: a straggler nearly every step.
  EXPECT_GT(f.slowest_mean, 1.15);
  EXPECT_NEAR(f.mean_step_s, e.mean_step_s, 0.01 * e.mean_step_s);
  const double agg = mean_between(f.power, 1, 39), ref = mean_between(e.power, 1, 39);
  EXPECT_NEAR(agg, ref, 0.01 * ref);
  // The peak: every rank in its products at once.
  const double agg_hi = *std::max_element(f.power.w.begin(), f.power.w.end());
  const double ref_hi = *std::max_element(e.power.w.begin(), e.power.w.end());
  EXPECT_NEAR(agg_hi, ref_hi, 0.01 * ref_hi);
  // The same spectrum: the share of 1-20 Hz, where the step's 7 Hz sits.
  const auto sa = analysis::welch_psd(f.power.w, 1e-3, 10);
  const auto se = analysis::welch_psd(e.power.w, 1e-3, 10);
  EXPECT_NEAR(analysis::band_share(sa, 1, 20), analysis::band_share(se, 1, 20), 0.03);
}

TEST(Fleet, TheSlowestRankGrowsWithTheFleet) {
  FleetOptions o;
  o.jitter = 0.01;
  // The median slowest of N normals: 1 - Phi(z) = 1 - 0.5^(1/N).
  o.gpus = 1000;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> z(0, 1);
  std::vector<double> maxima;
  for (int trial = 0; trial < 1001; ++trial) {
    double m = -1e9;
    for (int i = 0; i < 1000; ++i) m = std::max(m, z(rng));
    maxima.push_back(1 + 0.01 * m);
  }
  std::nth_element(maxima.begin(), maxima.begin() + 500, maxima.end());
  EXPECT_NEAR(slowest_of(o, 0.5), maxima[500], 0.0005);
  o.gpus = 100'000;
  EXPECT_NEAR(slowest_of(o, 0.5), 1 + 0.01 * 4.35, 0.0005);  // z of 6.9e-6 in the upper tail
  EXPECT_NEAR(slowness_quantile(o, 0.5), 1, 1e-9);
}

TEST(Fleet, CheckpointsPauseTheWholeFleet) {
  FleetOptions o;
  o.gpus = 100;
  o.seconds = 10;
  o.resolution_s = 0.01;
  o.allreduce_s = 0.03;
  o.jitter = 0;
  o.checkpoint_every = 20;
  o.checkpoint_s = 1;
  const Fleet f = simulate_fleet(test_rank(), o);
  EXPECT_NEAR(f.power.dt_s, 0.01, 1e-12);
  // Every 20 steps (2.6 s) a second at idle: the mean step grows by 1/20 s.
  EXPECT_NEAR(f.mean_step_s, 0.13 + 1.0 / 20, 0.01);
  int idle_bins = 0;
  for (double w : f.power.w) idle_bins += std::abs(w - 7000) < 1;
  EXPECT_GT(idle_bins, 2 * 100 + 3 * 90);  // lead-in, tail, three pauses (less their edges)
}

TEST(Fleet, AllReduceFollowsTheRingModel) {
  EXPECT_NEAR(allreduce_seconds(1e9, 8, 100, 0), 2 * 7.0 / 8 * 1e9 / 100e9, 1e-12);
  EXPECT_NEAR(allreduce_seconds(0, 1024, 50, 5), 2 * 10 * 5e-6, 1e-12);
  EXPECT_EQ(allreduce_seconds(1e9, 1, 50, 5), 0);
}

TEST(Fleet, RefusesOptionsOutsideTheirRanges) {
  const RankStep r = test_rank();
  for (auto bad : std::vector<void (*)(FleetOptions&)>{
           [](FleetOptions& o) { o.gpus = 0; }, [](FleetOptions& o) { o.seconds = NAN; },
           [](FleetOptions& o) { o.jitter = -1; }, [](FleetOptions& o) { o.resolution_s = 0; },
           [](FleetOptions& o) { o.checkpoint_every = -1; },
           [](FleetOptions& o) { o.straggler_share = 2; }}) {
    FleetOptions o;
    bad(o);
    EXPECT_THROW(simulate_fleet(r, o), std::runtime_error);
  }
  EXPECT_THROW(simulate_fleet(RankStep{}, FleetOptions{}), std::runtime_error);
}

TEST(Fleet, ARankStepComesFromTheDeviceModel) {
  const Profile p = load_profile("h200");
  const workload::Plan plan = workload::msm_plan(workload::Msm{4096, 4096, 32768}, 1);
  const RankStep r = rank_step(p, plan, 4, 1, 1e-3, 0.1);
  EXPECT_NEAR(r.idle_w, p.idle_w, 1e-9);
  EXPECT_NEAR(r.comm_w, p.idle_w + 0.1 * (p.power_limit_w - p.idle_w), 1e-9);
  ASSERT_GT(r.compute_w.size(), 10u);
  const double peak = *std::max_element(r.compute_w.begin(), r.compute_w.end());
  EXPECT_GT(peak, 0.8 * p.power_limit_w);
  EXPECT_LT(peak, 1.3 * p.power_limit_w);
}

}  // namespace powershape::sim
