#include "powershape/advise/sim_advisor.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>

#include "powershape/sim/simulator.hpp"
#include "powershape/util/error.hpp"

namespace powershape::advise {

SettingRange setting_range(const sim::Profile& p) {
  SettingRange r;
  r.min_mhz = p.min_mhz;
  r.max_mhz = p.max_mhz;
  r.clock_step_mhz = p.clock_step_mhz > 0 ? p.clock_step_mhz : 15;
  // NVIDIA's lowest settable limit is well above idle: 200 of 700 W on an H200, 100 of 300 W on
  // an L40S, 150 of 450 W on an RTX 4090. A profile does not say: 30% of its limit (at least
  // twice its idle power).
  r.min_limit_w = std::min(std::max(2 * p.idle_w, 0.3 * p.power_limit_w), p.power_limit_w / 2);
  r.max_limit_w = p.power_limit_w;
  r.default_limit_w = p.power_limit_w;
  for (const auto& m : p.power_modes)
    if (m.power_limit_w < p.power_limit_w || m.max_mhz < p.max_mhz) r.modes.push_back(m.name);
  if (!r.modes.empty()) r.modes.push_back("default");
  return r;
}

namespace {

struct Sample {
  double ms, joules, mhz, watts;
};

// One setting on one seed: the die first brought to the temperature the setting's own power
// holds (a short run finds that power), then 1 s of warm-up, then the measured run.
Sample run_one(const sim::Profile& base, const workload::Plan& plan, const Setting& s,
               const SimAdviseOptions& o, int index) {
  const uint64_t seed = o.seed + static_cast<uint64_t>(index);
  sim::Profile p = base;
  if (index > 0) {
    // The model's own uncertainty, which sensor noise alone would not show (the simulation is
    // deterministic but for it): each further seed draws the profile's fitted constants within
    // their calibration error (sim calibrate: figures within ~2-3%), the same draw for every
    // setting, so ratios are paired on the same model.
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> n(0, 1);
    p.dynamic_w *= 1 + 0.03 * n(rng);
    p.idle_w *= 1 + 0.05 * n(rng);
    p.memory_w *= 1 + 0.05 * n(rng);
    p.flops_per_cycle *= 1 + 0.02 * n(rng);
    p.mem_bandwidth_gbs *= 1 + 0.02 * n(rng);
  }
  if (!s.power_mode.empty()) sim::apply_power_mode(p, s.power_mode);
  sim::DeviceOptions d;
  d.step_s = o.step_s;
  d.seed = seed;
  d.power_limit_w = s.power_limit_w;
  d.clock_cap_mhz = s.clock_cap_mhz;
  double start_c = 0;
  {
    d.expected_s = 0.5;
    sim::SimDevice probe(p, d);
    const sim::RunRecord r = probe.run(plan, 0, 0.5);
    const double w = r.energy_j / (static_cast<double>(r.end_ns - r.begin_ns) * 1e-9);
    start_c = std::min(p.max_operating_c, p.ambient_c + w * (p.r_die_c_per_w + p.r_sink_c_per_w));
  }
  d.start_temp_c = start_c;
  d.expected_s = o.seconds + 1;
  sim::SimDevice dev(p, d);
  dev.run(plan, 0, 1);
  const sim::RunRecord r = dev.run(plan, 0, o.seconds);
  const double secs = static_cast<double>(r.end_ns - r.begin_ns) * 1e-9;
  const double n = std::max(1, r.iterations);
  return {secs / n * 1e3, r.energy_j / n, r.mean_clock_mhz, r.energy_j / secs};
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

std::vector<Sample> runs_of(const sim::Profile& p, const workload::Plan& plan, const Setting& s,
                            const SimAdviseOptions& o) {
  std::vector<Sample> out;
  for (int i = 0; i < o.seeds; ++i) out.push_back(run_one(p, plan, s, o, i));
  return out;
}

// The setting's outcome from its runs, its ratios paired seed by seed with the baseline's.
Outcome outcome_of(const Setting& s, const std::vector<Sample>& runs,
                   const std::vector<Sample>& base, uint64_t seed) {
  std::vector<double> ms, j, mhz, w, base_ms, base_j;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ms.push_back(runs[i].ms);
    j.push_back(runs[i].joules);
    mhz.push_back(runs[i].mhz);
    w.push_back(runs[i].watts);
    base_ms.push_back(base[i].ms);
    base_j.push_back(base[i].joules);
  }
  Outcome c;
  c.setting = s;
  c.ms = mean(ms);
  c.joules = mean(j);
  c.mean_clock_mhz = mean(mhz);
  c.mean_power_w = mean(w);
  c.time_ratio = experiment::ratio_interval(ms, base_ms, seed);
  c.energy_ratio = experiment::ratio_interval(j, base_j, seed);
  return c;
}

void check(const sim::Profile& p, const workload::Plan& plan, const SimAdviseOptions& o) {
  if (!(o.seconds >= 0.1 && o.seconds <= 600))
    throw invalid_input("seconds", "expected 0.1 to 600 s a setting");
  if (o.seeds < 2 || o.seeds > 20) throw invalid_input("seeds", "expected 2 to 20");
  // Each setting and seed runs whole iterations three times (finding its temperature, warming
  // up, measuring): an iteration must stay short for a sweep of settings to stay bounded.
  double nominal_s = 0;
  for (const auto& ph : plan.phases) nominal_s += sim::phase_seconds(p, ph, p.max_mhz);
  if (!(nominal_s <= kMaxIterationS))
    throw invalid_input("'" + plan.name + "' takes " + std::to_string(nominal_s) +
                        " s an iteration at " + p.name +
                        "'s peak rates; advise simulates many: at most " +
                        std::to_string(static_cast<int>(kMaxIterationS)) + " s (a smaller shape)");
}

}  // namespace

std::vector<Outcome> simulate_settings(const sim::Profile& p, const workload::Plan& plan,
                                       const std::vector<Setting>& settings,
                                       const SimAdviseOptions& o) {
  check(p, plan, o);
  if (settings.empty() || !settings.front().is_default())
    throw invalid_input("the settings must start with the baseline");
  const std::vector<Sample> base = runs_of(p, plan, settings.front(), o);
  std::vector<Outcome> out;
  for (std::size_t i = 0; i < settings.size(); ++i)
    out.push_back(outcome_of(settings[i], i == 0 ? base : runs_of(p, plan, settings[i], o), base,
                             o.seed + i));
  return out;
}

SearchResult search_settings(const sim::Profile& p, const workload::Plan& plan,
                             const std::vector<Knob>& knobs, const experiment::Objective& objective,
                             double max_slowdown, int points, const SimAdviseOptions& o) {
  const SettingRange range = setting_range(p);
  check(p, plan, o);
  SearchResult r;
  const std::vector<Sample> base = runs_of(p, plan, Setting{}, o);
  auto add = [&](const Setting& s) {
    for (const auto& x : r.outcomes)
      if (x.setting == s) return;
    r.outcomes.push_back(outcome_of(s, s.is_default() ? base : runs_of(p, plan, s, o), base,
                                    o.seed + r.outcomes.size()));
  };
  for (const Setting& s : candidate_settings(range, knobs, points)) add(s);
  // Halve the step around the best value of each numeric knob down to what can be set.
  struct Axis {
    double Setting::*field;
    double resolution, spacing, lo, hi;
    std::function<double(double)> snap;
  };
  std::vector<Axis> axes;
  auto on = [&](Knob k) { return std::find(knobs.begin(), knobs.end(), k) != knobs.end(); };
  if (on(Knob::kClock)) {
    const double lo = range.lowest_cap_mhz(), hi = range.highest_cap_mhz();
    axes.push_back({&Setting::clock_cap_mhz, range.clock_step_mhz, (hi - lo) / (points - 1), lo, hi,
                    [&](double f) { return range.snap_clock_mhz(f); }});
  }
  if (on(Knob::kPowerLimit) && range.max_limit_w > range.min_limit_w) {
    const double lo = range.lowest_limit_w(), hi = range.highest_limit_w();
    axes.push_back({&Setting::power_limit_w, range.limit_step_w(), (hi - lo) / (points - 1), lo, hi,
                    [&](double w) { return range.snap_limit_w(w); }});
  }
  for (const Axis& a : axes) {
    auto best_on_axis = [&]() -> const Outcome* {
      const Outcome* best = nullptr;
      double score = 0;
      for (const auto& x : r.outcomes) {
        if (x.setting.*a.field <= 0) continue;
        if (max_slowdown >= 0 && x.time_ratio.mid - 1 > max_slowdown) continue;
        const double s = objective.score(x.ms, x.joules);
        if (best == nullptr || s < score) {
          best = &x;
          score = s;
        }
      }
      return best;
    };
    for (double h = a.spacing / 2; h >= a.resolution * 0.999; h /= 2) {
      const Outcome* best = best_on_axis();
      if (best == nullptr) break;
      const double at = best->setting.*a.field;
      for (double v : {at - h, at + h}) {
        const double snapped = a.snap(v);
        if (snapped < a.lo || snapped > a.hi) continue;
        Setting s;
        s.*a.field = snapped;
        add(s);
      }
    }
  }
  r.chosen = choose(r.outcomes, objective, max_slowdown, false);
  r.simulations = static_cast<int>(r.outcomes.size()) * o.seeds;
  return r;
}

}  // namespace powershape::advise
