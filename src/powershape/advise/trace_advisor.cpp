#include "powershape/advise/trace_advisor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <stdexcept>

#include "powershape/analysis/series.hpp"
#include "powershape/util/error.hpp"

namespace powershape::advise {
using analysis::PhaseClass;
using analysis::PhaseWindow;

double VoltageCurve::shape(double mhz) const {
  auto volts = [&](double f) {
    if (table.empty()) return 1.0;
    if (f <= table.front().first) return table.front().second;
    if (f >= table.back().first) return table.back().second;
    auto hi = std::lower_bound(table.begin(), table.end(), std::make_pair(f, 0.0));
    auto lo = hi - 1;
    return lo->second + (hi->second - lo->second) * (f - lo->first) / (hi->first - lo->first);
  };
  const double v = volts(mhz) / volts(max_mhz);
  return v * v * mhz / max_mhz;
}

namespace {

// Weighted least squares of y on (1, x); false when x does not vary.
bool line_fit(const std::vector<double>& x, const std::vector<double>& y,
              const std::vector<double>& w, double& a, double& b) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sw += w[i];
    sx += w[i] * x[i];
    sy += w[i] * y[i];
    sxx += w[i] * x[i] * x[i];
    sxy += w[i] * x[i] * y[i];
  }
  const double det = sw * sxx - sx * sx;
  if (sw <= 0 || std::abs(det) <= 1e-12 * sw * sxx) return false;
  b = (sw * sxy - sx * sy) / det;
  a = (sy - b * sx) / sw;
  return true;
}

bool busy(PhaseClass c) { return c != PhaseClass::kIdle; }

// Steps: the region name repeated most (at least 4 times) on this GPU, each instance's duration
// against its mean reported clock.
void learn_steps(const trace::Trace& t, int gpu, TraceModel& m) {
  std::map<std::string, int> count;
  for (const auto& r : t.regions)
    if (r.gpu < 0 || r.gpu == gpu) ++count[r.name];
  std::string name;
  int most = 0;
  for (const auto& [n, c] : count)
    if (c > most) {
      most = c;
      name = n;
    }
  if (most < 4) return;
  const auto clock = analysis::series(t, gpu, telemetry::Signal::kSmClock);
  const auto reasons = analysis::series(t, gpu, telemetry::Signal::kReasons);
  std::vector<const telemetry::Region*> steps;
  for (const auto& r : t.regions)
    if (r.name == name && (r.gpu < 0 || r.gpu == gpu) && r.end_ns > r.begin_ns) steps.push_back(&r);
  std::sort(steps.begin(), steps.end(),
            [](const auto* a, const auto* b) { return a->begin_ns < b->begin_ns; });
  m.steps = static_cast<int>(steps.size());
  m.step_region = name;
  // Consecutive steps pooled until they span kStepPoolS: the reported clock is a ~100 ms view of
  // the real one, and regressing millisecond steps on it attenuates the slope toward nothing.
  constexpr double kStepPoolS = 0.5;
  std::vector<double> x, y, w;
  for (std::size_t i = 0; i < steps.size();) {
    std::size_t j = i;
    double busy_s = 0;
    while (j < steps.size() && busy_s < kStepPoolS) {
      busy_s += static_cast<double>(steps[j]->end_ns - steps[j]->begin_ns) * 1e-9;
      ++j;
    }
    if (busy_s < kStepPoolS / 2 && !x.empty()) break;  // a short remainder
    const int64_t from = steps[i]->begin_ns, to = steps[j - 1]->end_ns;
    const auto d = analysis::distribution(analysis::held(clock, from, to));
    // Under the power cap the fast limiter holds the real clock below the reported one (an H200
    // reads 1980 MHz through bursts its own probe sees at ~1700): such steps say nothing true
    // about time against clock.
    int64_t capped = 0;
    for (const auto& h : analysis::held(reasons, from, to))
      if ((static_cast<uint64_t>(h.value) & telemetry::reason::kSwPowerCap) != 0)
        capped += h.duration_ns;
    if (d.covered_ns > 0 && d.mean > 0 && capped < (to - from) / 10) {
      x.push_back(m.volts.max_mhz / d.mean);
      y.push_back(busy_s / static_cast<double>(j - i));
      w.push_back(static_cast<double>(j - i));
    }
    i = j;
  }
  if (x.size() < 4) return;
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  if (*hi / *lo < 1.02) return;  // the steps ran at one clock: nothing to learn from
  double a = 0, b = 0;
  if (!line_fit(x, y, w, a, b)) return;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += w[i] * x[i];
    my += w[i] * y[i];
  }
  m.step_clock_share = std::clamp(b * mx / my, 0.0, 1.0);
}

}  // namespace

VoltageCurve voltage_curve(const sim::Profile& p) { return {p.max_mhz, p.vf_table}; }

TraceModelOptions trace_options(const sim::Profile& p) {
  TraceModelOptions o;
  o.memory_clock_share = p.mem_clock_sensitivity;
  o.memory_w = p.memory_w;
  o.idle_w = p.idle_w + p.leakage_w;
  return o;
}

TraceModel fit_trace_model(const trace::Trace& t, int gpu, const VoltageCurve& v,
                           const TraceModelOptions& o) {
  if (!(v.max_mhz > 0)) throw invalid_input("voltage curve: no maximum clock");
  if (!(o.memory_clock_share >= 0 && o.memory_clock_share <= 1))
    throw invalid_input("memory clock share: expected 0 to 1");
  TraceModel m;
  m.volts = v;
  m.windows = analysis::classify_phases(t, gpu, o.phases);
  double idle_e = 0, idle_s = 0, lowest = 1e300;
  int busy_windows = 0;
  for (auto& w : m.windows) {
    if (w.sm_clock_mhz <= 0) w.sm_clock_mhz = v.max_mhz;  // no clock reading: as at the maximum
    lowest = std::min(lowest, w.power_w);
    if (w.cls == PhaseClass::kIdle) {
      idle_e += w.energy_j;
      idle_s += w.seconds();
    } else {
      ++busy_windows;
    }
  }
  if (busy_windows < 2) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "the trace has %d busy window(s) of %g s; the advisor needs at least 2 (a longer "
                  "recording, or shorter windows)",
                  busy_windows, o.phases.window_s);
    throw invalid_input("window", why);
  }
  m.idle_w = idle_s > 0 ? idle_e / idle_s : o.idle_w >= 0 ? std::min(o.idle_w, lowest) : lowest;
  // Memory power above idle, per window.
  double mem_floor = 1e300;
  bool measured = false;
  for (const auto& w : m.windows)
    if (w.memory_power_w >= 0) {
      mem_floor = std::min(mem_floor, w.memory_power_w);
      measured = true;
    }
  for (const auto& w : m.windows) {
    double mem = 0;
    if (measured && w.memory_power_w >= 0)
      mem = w.memory_power_w - mem_floor;
    else if (o.memory_w > 0 && w.util_mem_pct >= 0)
      mem = o.memory_w * w.util_mem_pct / 100;
    m.memory_w.push_back(busy(w.cls) ? std::min(mem, std::max(0.0, w.power_w - m.idle_w)) : 0);
  }
  learn_steps(t, gpu, m);
  for (PhaseClass c : {PhaseClass::kCompute, PhaseClass::kMemory, PhaseClass::kBursty}) {
    ClassFit f;
    f.cls = c;
    std::vector<double> x, y, w;
    double lo = 1e300, hi = 0;
    for (std::size_t i = 0; i < m.windows.size(); ++i) {
      const auto& win = m.windows[i];
      if (win.cls != c) continue;
      ++f.windows;
      f.seconds += win.seconds();
      lo = std::min(lo, win.sm_clock_mhz);
      hi = std::max(hi, win.sm_clock_mhz);
      // At the power cap, power is the limit's and the clock follows the work's activity: such a
      // window says nothing about how power follows the clock.
      if (win.power_capped >= 0.5) continue;
      x.push_back(v.shape(win.sm_clock_mhz));
      y.push_back(win.power_w - m.memory_w[i]);
      w.push_back(win.seconds());
    }
    f.clock_lo_mhz = f.windows > 0 ? lo : 0;
    f.clock_hi_mhz = hi;
    f.static_w = m.idle_w;
    double a = 0, b = 0;
    const double min_y = y.empty() ? 0 : *std::min_element(y.begin(), y.end());
    const auto [xlo, xhi] = std::minmax_element(x.begin(), x.end());
    if (x.size() >= 3 && *xhi - *xlo >= 0.05 && line_fit(x, y, w, a, b) && b > 0 && a >= 0 &&
        a <= min_y) {
      f.fitted = true;
      f.static_w = a;
      f.slope_w = b;
    } else {  // the class's mean activity over the idle power, capped windows and all
      x.clear();
      y.clear();
      w.clear();
      for (std::size_t i = 0; i < m.windows.size(); ++i) {
        const auto& win = m.windows[i];
        if (win.cls != c) continue;
        x.push_back(v.shape(win.sm_clock_mhz));
        y.push_back(win.power_w - m.memory_w[i]);
        w.push_back(win.seconds());
      }
      double sa = 0, sw = 0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        sa += w[i] * std::max(0.0, y[i] - f.static_w) / x[i];
        sw += w[i];
      }
      f.slope_w = sw > 0 ? sa / sw : 0;
    }
    double se = 0, sw = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double r = y[i] - (f.static_w + f.slope_w * x[i]);
      se += w[i] * r * r;
      sw += w[i];
    }
    f.rms_w = sw > 0 ? std::sqrt(se / sw) : 0;
    if (m.step_clock_share >= 0) {
      f.clock_share = m.step_clock_share;
      f.share_learned = true;
    } else {
      f.clock_share = c == PhaseClass::kCompute  ? 1
                      : c == PhaseClass::kMemory ? o.memory_clock_share
                                                 : (1 + o.memory_clock_share) / 2;
    }
    m.classes.push_back(f);
  }
  return m;
}

namespace {

struct Totals {
  double seconds = 0, joules = 0;
};

// The windows (by index, with repeats for a resample) under a setting, with each class's clock
// share as given.
Totals replay(const TraceModel& m, const std::vector<std::size_t>& pick, const Setting& s,
              const std::array<double, analysis::kPhaseClassCount>& share) {
  const double floor_mhz =
      m.volts.table.empty() ? m.volts.max_mhz * 0.25 : m.volts.table.front().first;
  Totals t;
  for (std::size_t i : pick) {
    const PhaseWindow& w = m.windows[i];
    if (!busy(w.cls)) {
      t.seconds += w.seconds();
      t.joules += w.energy_j;
      continue;
    }
    const ClassFit& c = m.classes[static_cast<std::size_t>(w.cls) - 1];
    const double f = w.sm_clock_mhz;
    const double mem_w = m.memory_w[i];
    const double activity = std::max(0.0, w.power_w - mem_w - c.static_w) / m.volts.shape(f);
    double g = f;
    if (s.clock_cap_mhz > 0) g = std::min(g, s.clock_cap_mhz);
    const double phi = share[static_cast<std::size_t>(w.cls)];
    auto stretch = [&](double clock) { return phi * f / clock + 1 - phi; };
    // The memory power spreads over the longer time: the same bytes, the same energy.
    auto watts = [&](double clock) {
      return c.static_w + mem_w / stretch(clock) + activity * m.volts.shape(clock);
    };
    if (s.power_limit_w > 0 && watts(g) > s.power_limit_w) {
      double lo = floor_mhz, hi = g;  // the highest clock whose power is under the limit
      for (int k = 0; k < 40; ++k) {
        const double mid = (lo + hi) / 2;
        (watts(mid) > s.power_limit_w ? hi : lo) = mid;
      }
      g = lo;
    }
    const double secs = w.seconds() * stretch(g);
    t.seconds += secs;
    t.joules += watts(g) * secs;
  }
  return t;
}

}  // namespace

std::vector<Outcome> predict_from_trace(const TraceModel& m, const std::vector<Setting>& settings,
                                        uint64_t seed, int resamples) {
  if (settings.empty() || !settings.front().is_default())
    throw invalid_input("the settings must start with the baseline");
  std::array<double, analysis::kPhaseClassCount> share{};
  for (const auto& c : m.classes) share[static_cast<std::size_t>(c.cls)] = c.clock_share;
  std::vector<std::size_t> all(m.windows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  // Resamples: the windows drawn with replacement, and each class's clock share drawn from what
  // it plausibly is where the trace did not show it: compute-bound 0.85-1; memory-bound 0-0.5
  // (NVML's utilisation, sampled over 1/6 s, calls a window memory-bound that runs products
  // between its streams, as matmul-softmax-matmul does: 0.4 of its time follows the clock on
  // the L40S model); bursty 0.3-0.8.
  // A long trace (a day of 1 s windows) against every setting: fewer resamples, at least 50, so
  // that the replays stay under ~5e8 windows.
  resamples = static_cast<int>(
      std::clamp(5e8 / (static_cast<double>(all.size()) * static_cast<double>(settings.size())),
                 50.0, static_cast<double>(std::max(resamples, 50))));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> draw(0, all.size() - 1);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<std::pair<std::vector<std::size_t>, std::array<double, analysis::kPhaseClassCount>>>
      draws;
  for (int r = 0; r < resamples; ++r) {
    std::vector<std::size_t> pick(all.size());
    for (auto& p : pick) p = draw(rng);
    auto sh = share;
    if (m.step_clock_share < 0) {
      sh[static_cast<std::size_t>(PhaseClass::kCompute)] = 0.85 + 0.15 * unit(rng);
      sh[static_cast<std::size_t>(PhaseClass::kMemory)] = 0.5 * unit(rng);
      sh[static_cast<std::size_t>(PhaseClass::kBursty)] = 0.3 + 0.5 * unit(rng);
    }
    draws.emplace_back(std::move(pick), sh);
  }
  std::vector<Totals> base;
  for (const auto& [pick, sh] : draws) base.push_back(replay(m, pick, Setting{}, sh));
  const Totals base_point = replay(m, all, Setting{}, share);
  std::vector<Outcome> out;
  for (const Setting& s : settings) {
    const Totals point = replay(m, all, s, share);
    std::vector<double> tr, er;
    for (std::size_t r = 0; r < draws.size(); ++r) {
      const Totals x = replay(m, draws[r].first, s, draws[r].second);
      tr.push_back(x.seconds / base[r].seconds);
      er.push_back(x.joules / base[r].joules);
    }
    std::sort(tr.begin(), tr.end());
    std::sort(er.begin(), er.end());
    auto pct = [](const std::vector<double>& v, double q) {
      return v.empty() ? 1.0 : v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
    };
    Outcome o;
    o.setting = s;
    o.ms = point.seconds * 1e3;
    o.joules = point.joules;
    o.mean_power_w = point.joules / point.seconds;
    const double tmid = point.seconds / base_point.seconds, emid = point.joules / base_point.joules;
    o.time_ratio = {std::min(tmid, pct(tr, 0.025)), tmid, std::max(tmid, pct(tr, 0.975))};
    o.energy_ratio = {std::min(emid, pct(er, 0.025)), emid, std::max(emid, pct(er, 0.975))};
    out.push_back(o);
  }
  return out;
}

}  // namespace powershape::advise
