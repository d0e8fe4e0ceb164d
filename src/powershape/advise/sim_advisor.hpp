#pragma once
// Settings predicted on a simulated device: each candidate simulated in the thermal steady state
// its own power would hold, over several seeds (the governor sees a noisy sensor), and a search
// that reaches the best setting with a fraction of an exhaustive sweep's simulations.
#include <cstdint>
#include <vector>

#include "powershape/advise/setting.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/workload/plan.hpp"

namespace powershape::advise {

// What a profile lets one set: its clocks, power limits from its idle power up to its own limit,
// and its power modes (the default one, the profile as it is, last).
SettingRange setting_range(const sim::Profile& p);

struct SimAdviseOptions {
  double seconds = 3;    // measured per setting and seed, after a 1 s warm-up
  double step_s = 5e-4;  // simulation step
  int seeds = 3;  // >= 2: the first the profile as it is, the others its constants drawn within
                  // their calibration error; the intervals pair seeds across settings
  uint64_t seed = 1;
};

// The longest iteration (at the device's peak rates) advise simulates settings of.
inline constexpr double kMaxIterationS = 60;

// Outcomes of each setting; settings[0] is the baseline the ratios are against. Throws
// std::invalid_argument on options out of range (seconds 0.1..600, seeds 2..20) or an iteration
// longer than kMaxIterationS.
std::vector<Outcome> simulate_settings(const sim::Profile& p, const workload::Plan& plan,
                                       const std::vector<Setting>& settings,
                                       const SimAdviseOptions& o);

struct SearchResult {
  std::vector<Outcome> outcomes;  // every setting simulated, the baseline first
  std::size_t chosen = 0;
  int simulations = 0;  // settings x seeds
};

// The coarse grid (candidate_settings with `points` a knob), then around the best clock cap and
// the best power limit, steps halved down to the device's resolution (a clock step, 1% of the
// power range): about points + 2 log2(points) settings a knob instead of every value.
SearchResult search_settings(const sim::Profile& p, const workload::Plan& plan,
                             const std::vector<Knob>& knobs, const experiment::Objective& objective,
                             double max_slowdown, int points, const SimAdviseOptions& o);

}  // namespace powershape::advise
