#include "powershape/sim/mechanism_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "powershape/util/error.hpp"

namespace powershape::sim {
namespace {

using telemetry::Signal;
namespace reason = telemetry::reason;

struct Row {
  double t_s, mhz, temp_c, fan_pct;  // fan_pct < 0: not read
  uint64_t reasons;
};

std::vector<Row> rows_of(const trace::Trace& t, int gpu) {
  std::vector<Row> out;
  for (const auto& s : t.samples) {
    if (s.gpu != gpu) continue;
    const auto &c = s[Signal::kSmClock], &temp = s[Signal::kGpuTemp], &r = s[Signal::kReasons];
    if (!c.ok() || !temp.ok()) continue;
    const auto& f = s[Signal::kFanSpeed];
    out.push_back({static_cast<double>(s.t_ns) * 1e-9, static_cast<double>(c.value),
                   static_cast<double>(temp.value), f.ok() ? static_cast<double>(f.value) : -1,
                   r.ok() ? static_cast<uint64_t>(r.value) : 0});
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::string format(const char* fmt, double a, double b = 0, double c = 0, double d = 0) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, a, b, c, d);
  return buf;
}

void fit_slowdown(const std::vector<Row>& rows, MechanismFit& f) {
  // The staircase's steps are the largest drops while the slowdown holds; the other loops move
  // the clock by less (a reading or two of a power loop), so the drops under half the largest
  // are theirs.
  std::vector<double> on_c, drops;
  std::vector<std::size_t> at;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const Row &a = rows[i - 1], &b = rows[i];
    const bool was = a.reasons & reason::kSwThermal, is = b.reasons & reason::kSwThermal;
    if (is && !was) on_c.push_back(b.temp_c);
    if (is && b.mhz < a.mhz) drops.push_back(a.mhz - b.mhz), at.push_back(i);
  }
  const double largest = drops.empty() ? 0 : *std::max_element(drops.begin(), drops.end());
  std::vector<double> steps, gaps;
  std::size_t last = 0;
  for (std::size_t k = 0; k < drops.size(); ++k) {
    if (drops[k] < 0.5 * largest) continue;
    steps.push_back(drops[k]);
    // Two steps of one spell (the slowdown held in between) are an interval apart.
    bool held = last > 0;
    for (std::size_t i = last; held && i < at[k]; ++i) held = rows[i].reasons & reason::kSwThermal;
    if (held) gaps.push_back(rows[at[k]].t_s - rows[last].t_s);
    last = at[k];
  }
  drops = steps;
  Profile& p = f.profile;
  // A step given back: the clock up by most of a step while the slowdown held (other loops move
  // it by less), at the temperature then.
  std::vector<double> back_c;
  const double step = median(drops);
  for (std::size_t i = 1; i < rows.size() && !drops.empty(); ++i) {
    const Row &a = rows[i - 1], &b = rows[i];
    if ((a.reasons & reason::kSwThermal) && b.mhz - a.mhz >= 0.8 * step) back_c.push_back(b.temp_c);
  }
  if (on_c.empty() || drops.empty()) {
    f.lines.push_back(
        "thermal slowdown: not seen (no SW thermal slowdown setting in with a clock drop): kept" +
        std::string(p.slowdown_c > 0 ? "" : " off"));
    return;
  }
  p.slowdown_c = median(on_c);
  p.slowdown_step_mhz = step;
  if (!gaps.empty()) p.slowdown_interval_ms = median(gaps) * 1e3;
  if (!back_c.empty()) p.slowdown_hysteresis_c = std::max(0.0, p.slowdown_c - median(back_c));
  p.thermal_gain_mhz_per_c_s = 0;
  f.lines.push_back(format("thermal slowdown: sets in at %.1f C (%.0f times), steps of %.0f MHz "
                           "every %.0f ms",
                           p.slowdown_c, static_cast<double>(on_c.size()), p.slowdown_step_mhz,
                           p.slowdown_interval_ms) +
                    (back_c.empty()
                         ? std::string(", hysteresis kept (no step back seen)")
                         : format(", steps back %.1f C lower", p.slowdown_hysteresis_c)));
}

void fit_recovery(const std::vector<Row>& rows, MechanismFit& f) {
  // A rise: from the clock's low to its last step up before it falls again or a reason other
  // than the power cap holds, over two steps up at least (reported clocks move in steps, so one
  // step between two readings says little of the rate).
  std::vector<double> rates;
  std::size_t from = 0, last_up = 0;
  int ups = 0;
  auto close = [&] {
    if (ups >= 2 && rows[last_up].t_s > rows[from].t_s)
      rates.push_back((rows[last_up].mhz - rows[from].mhz) / (rows[last_up].t_s - rows[from].t_s));
    ups = 0;
  };
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const Row &a = rows[i - 1], &b = rows[i];
    const uint64_t held = b.reasons & ~reason::kGpuIdle & ~reason::kSwPowerCap;
    if (held != 0 || b.mhz < a.mhz) {
      close();
      from = i;
      continue;
    }
    if (b.mhz > a.mhz) {
      if (ups == 0) from = i - 1;
      ++ups;
      last_up = i;
    }
  }
  close();
  Profile& p = f.profile;
  if (rates.size() < 3) {
    f.lines.push_back("clock recovery: not seen (fewer than 3 rises of the clock): kept");
    return;
  }
  const double r = median(rates);
  if (p.spike_gain_mhz_per_w_s > 0) {
    p.spike_recovery_mhz_per_s = r;
    f.lines.push_back(
        format("spike loop: the clock comes back at %.0f MHz/s (median of %.0f rises)", r,
               static_cast<double>(rates.size())));
  } else {
    f.lines.push_back(
        format("clock recovery: %.0f MHz/s (median of %.0f rises), the profile's "
               "loops recover at %.0f: no spike loop in the profile to take it",
               r, static_cast<double>(rates.size()), p.recovery_mhz_per_s));
  }
}

void fit_fan(const std::vector<Row>& rows, MechanismFit& f) {
  std::vector<const Row*> fan;
  for (const Row& r : rows)
    if (r.fan_pct >= 0) fan.push_back(&r);
  Profile& p = f.profile;
  if (fan.size() < 20) {
    f.lines.push_back("fan: not read (fewer than 20 fan speed readings): kept" +
                      std::string(p.fan_tau_s > 0 ? "" : " off"));
    return;
  }
  // The floor: the lowest speed, where the fan rests a second or more (a fan that never cools
  // down to it in the recording does not show it, and the profile's stands).
  double lo = fan.front()->fan_pct, at_lo_s = 0;
  for (const Row* r : fan) lo = std::min(lo, r->fan_pct);
  for (std::size_t i = 1; i < fan.size(); ++i)
    if (fan[i - 1]->fan_pct <= lo + 0.5 && fan[i]->fan_pct <= lo + 0.5)
      at_lo_s += fan[i]->t_s - fan[i - 1]->t_s;
  const bool floor_seen = at_lo_s >= 1;
  // A straight line of speed against the temperature `lag` earlier, over the readings between
  // the fan's floor and full speed; the lag that fits best stands for its time constant.
  double best_err = std::numeric_limits<double>::infinity(), best_lag = 0, slope = 0, icpt = 0;
  for (double lag : {0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 30.0, 45.0, 60.0}) {
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    std::size_t j = 0;
    std::vector<std::pair<double, double>> xy;
    for (const Row* r : fan) {
      if (r->fan_pct <= lo + 1 || r->fan_pct >= 99) continue;
      const double at = r->t_s - lag;
      while (j + 1 < rows.size() && rows[j + 1].t_s <= at) ++j;
      if (rows[j].t_s > at) continue;
      xy.emplace_back(rows[j].temp_c, r->fan_pct);
    }
    for (auto [x, y] : xy) {
      n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    const double den = n * sxx - sx * sx;
    if (n < 10 || !(std::abs(den) > 0)) continue;
    const double a = (n * sxy - sx * sy) / den, b = (sy - a * sx) / n;
    double err = 0;
    for (auto [x, y] : xy) err += (y - (a * x + b)) * (y - (a * x + b));
    if (a > 0 && err / n < best_err) best_err = err / n, best_lag = lag, slope = a, icpt = b;
  }
  if (!(slope > 0)) {
    f.lines.push_back("fan: its speed does not follow the temperature in this recording: kept" +
                      std::string(p.fan_tau_s > 0 ? "" : " off"));
    return;
  }
  const bool kept_floor = !floor_seen && p.fan_tau_s > 0;
  if (!kept_floor) p.fan_min_pct = std::clamp(lo, 0.0, 99.0);
  p.fan_start_c = (p.fan_min_pct - icpt) / slope;
  p.fan_full_c = (100 - icpt) / slope;
  p.fan_tau_s = std::max(0.01, best_lag);
  if (p.fan_r_sink_at_min_c_per_w < p.r_sink_c_per_w)
    p.fan_r_sink_at_min_c_per_w = p.r_sink_c_per_w;
  f.lines.push_back(format("fan: from %.0f%% at %.1f C to 100%% at %.1f C, lagging ~%.1f s",
                           p.fan_min_pct, p.fan_start_c, p.fan_full_c, p.fan_tau_s) +
                    (floor_seen   ? ""
                     : kept_floor ? " (the floor not seen resting: the profile's)"
                                  : " (the floor not seen resting: the lowest read)") +
                    "; hysteresis and the sink's resistance at its slowest kept");
}

void fit_supply(const std::vector<Row>& rows, MechanismFit& f) {
  std::vector<double> clocks;
  int holds = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!(rows[i].reasons & reason::kHwPowerBrake)) continue;
    clocks.push_back(rows[i].mhz);
    if (i == 0 || !(rows[i - 1].reasons & reason::kHwPowerBrake)) ++holds;
  }
  Profile& p = f.profile;
  if (clocks.empty()) {
    f.lines.push_back("supply: no HW power brake seen: kept" +
                      std::string(p.supply_limit_w > 0 ? "" : " off"));
    return;
  }
  if (!(p.supply_limit_w > 0)) {
    f.lines.push_back(
        format("supply: HW power brake held %.0f times at a median %.0f MHz, but the profile has "
               "no supply section to take it (limit_w, rest_w, window_ms are not in a "
               "recording)",
               holds, median(clocks)));
    return;
  }
  p.supply_degraded_mhz = std::clamp(median(clocks), p.min_mhz, p.max_mhz);
  // Under a steady load the brake trips again the moment a hold ends, so in readings 100 ms
  // apart the holds run into one: their length says nothing of hold_s.
  f.lines.push_back(
      format("supply: holds %.0f MHz (the median clock while braked, %.0f holds); "
             "hold_s, limit, rest and window kept (a hold that trips again under "
             "load is not told apart in the readings)",
             p.supply_degraded_mhz, holds));
}

}  // namespace

MechanismFit fit_mechanisms(const Profile& start, const trace::Trace& t, int gpu) {
  const std::vector<Row> rows = rows_of(t, gpu);
  if (rows.size() < 2)
    throw invalid_input("the recording has no SM clock and temperature readings of GPU " +
                        std::to_string(gpu) + " to fit mechanisms from");
  MechanismFit f{start, {}};
  fit_slowdown(rows, f);
  fit_recovery(rows, f);
  fit_fan(rows, f);
  fit_supply(rows, f);
  f.profile.sources.push_back("mechanisms fitted from a recording: " + [&] {
    std::string s;
    for (const auto& l : f.lines) s += (s.empty() ? "" : "; ") + l;
    return s;
  }());
  // A fit out of a figure's range (a fan line through a handful of readings, say) is named here
  // rather than written into a profile that will not load.
  try {
    f.profile = profile_from_json(to_json(f.profile));
  } catch (const std::exception& e) {
    throw invalid_input(std::string("the mechanisms fitted from this recording make no profile: ") +
                        e.what());
  }
  return f;
}

}  // namespace powershape::sim
