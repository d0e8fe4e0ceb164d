#include "powershape/advise/sim_advisor.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::advise {
namespace {

workload::Plan plan_on(const sim::Profile& p, const workload::Workload& w) {
  return workload::make_plan(w, {p.peak_flops_per_s(), p.peak_bytes_per_s()});
}

SimAdviseOptions quick() {
  SimAdviseOptions o;
  o.seconds = 1;
  o.seeds = 2;
  return o;
}

}  // namespace

TEST(SimAdvisor, LowerClocksRunSlowerOnLessPower) {
  const sim::Profile p = sim::load_profile("h200");
  const auto plan = plan_on(p, {workload::LmHead{16384, 896, 151936}});
  const auto o = simulate_settings(p, plan, {Setting{}, {1200, 0, ""}, {900, 0, ""}}, quick());
  ASSERT_EQ(o.size(), 3u);
  EXPECT_DOUBLE_EQ(o[0].time_ratio.mid, 1);
  EXPECT_GT(o[1].time_ratio.mid, 1.1);
  EXPECT_GT(o[2].time_ratio.mid, o[1].time_ratio.mid);
  EXPECT_LT(o[1].mean_power_w, o[0].mean_power_w);
  EXPECT_LT(o[2].mean_power_w, o[1].mean_power_w);
  // The later seeds draw the model's constants: the intervals have width and hold the estimate.
  EXPECT_LT(o[1].energy_ratio.lo, o[1].energy_ratio.hi);
  EXPECT_LE(o[1].energy_ratio.lo, o[1].energy_ratio.mid);
  EXPECT_GE(o[1].energy_ratio.hi, o[1].energy_ratio.mid);
}

// The search's choice against every settable value simulated, on devices and workloads of
// different kinds, for each objective and bound: within 2% of the exhaustive optimum, never over
// the bound, with a fraction of the simulations.
TEST(SimAdvisor, SearchFindsTheExhaustiveOptimumWithinTwoPercent) {
  struct Case {
    const char* profile;
    workload::Workload w;
    const char* objective;
    double max_slowdown;
  };
  const std::vector<Case> cases = {
      {"h200", {workload::LmHead{16384, 896, 151936}}, "energy", -1},
      {"h200", {workload::LmHead{16384, 896, 151936}}, "energy", 0.05},
      {"l40s", {workload::Msm{16384, 128, 16384}}, "edp", 0.1},
      {"jetson-agx-orin", {workload::LmHead{4096, 896, 151936}}, "energy", 0.2},
      {"rtx4090", {workload::Square{50, 0.5, workload::Gap::kMemory}}, "cost:0.5", -1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.profile) + " " + c.objective);
    const sim::Profile p = sim::load_profile(c.profile);
    const auto plan = plan_on(p, c.w);
    const auto obj = experiment::parse_objective(c.objective, p.power_limit_w);
    const std::vector<Knob> knobs = p.power_modes.empty()
                                        ? std::vector<Knob>{Knob::kClock, Knob::kPowerLimit}
                                        : std::vector<Knob>{Knob::kClock, Knob::kMode};
    const auto search = search_settings(p, plan, knobs, obj, c.max_slowdown, 8, quick());
    const auto every =
        simulate_settings(p, plan, exhaustive_settings(setting_range(p), knobs), quick());
    const std::size_t best = choose(every, obj, c.max_slowdown, false);
    // The search's choice as the exhaustive sweep simulated it.
    const auto& chosen = search.outcomes[search.chosen];
    const auto it = std::find_if(every.begin(), every.end(),
                                 [&](const Outcome& x) { return x.setting == chosen.setting; });
    ASSERT_NE(it, every.end());
    EXPECT_LE(obj.score(it->ms, it->joules), obj.score(every[best].ms, every[best].joules) * 1.02);
    if (c.max_slowdown >= 0) {
      EXPECT_LE(it->time_ratio.mid - 1, c.max_slowdown);
    }
    EXPECT_LT(search.outcomes.size(), every.size() / 2);
  }
}

TEST(SimAdvisor, RefusesUnboundedOrUnpairedRuns) {
  const sim::Profile p = sim::load_profile("h200");
  const auto plan = plan_on(p, {workload::Products{4096}});
  SimAdviseOptions o = quick();
  o.seeds = 1;
  EXPECT_THROW(simulate_settings(p, plan, {Setting{}}, o), powershape::Error);
  o = quick();
  o.seconds = 1e6;
  EXPECT_THROW(simulate_settings(p, plan, {Setting{}}, o), powershape::Error);
  EXPECT_THROW(simulate_settings(p, plan, {{1000, 0, ""}}, quick()), powershape::Error);
  // An iteration of hours would make a sweep of settings unbounded.
  const auto huge = plan_on(p, {workload::Products{1'000'000}});
  EXPECT_THROW(simulate_settings(p, huge, {Setting{}}, quick()), powershape::Error);
  EXPECT_THROW(search_settings(p, huge, {Knob::kClock}, experiment::parse_objective("energy", 700),
                               -1, 8, quick()),
               powershape::Error);
}

}  // namespace powershape::advise
