#include "powershape/advise/setting.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::advise {

std::string Setting::describe() const {
  std::string out;
  char buf[64];
  if (!power_mode.empty()) out += "mode " + power_mode;
  if (clock_cap_mhz > 0) {
    std::snprintf(buf, sizeof buf, "clock cap %.0f MHz", clock_cap_mhz);
    out += (out.empty() ? "" : ", ") + std::string(buf);
  }
  if (power_limit_w > 0) {
    std::snprintf(buf, sizeof buf, "power limit %.0f W", power_limit_w);
    out += (out.empty() ? "" : ", ") + std::string(buf);
  }
  if (smoothing) out += (out.empty() ? "" : ", ") + smoothing->describe();
  return out.empty() ? "as found" : out;
}

std::vector<Knob> parse_knobs(const std::string& s) {
  std::vector<Knob> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const auto comma = s.find(',', pos);
    const std::string k =
        s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (k == "clock")
      out.push_back(Knob::kClock);
    else if (k == "power")
      out.push_back(Knob::kPowerLimit);
    else if (k == "mode")
      out.push_back(Knob::kMode);
    else
      throw invalid_input("knobs", "expected a list of clock, power, mode; got '" + k + "'");
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

namespace {

bool has(const std::vector<Knob>& k, Knob x) { return std::find(k.begin(), k.end(), x) != k.end(); }

std::vector<Setting> grid(const SettingRange& r, const std::vector<Knob>& knobs, int points,
                          bool every) {
  if (!(r.max_mhz > r.min_mhz && r.clock_step_mhz > 0))
    throw invalid_input("device clock range: expected min < max and a positive step");
  std::vector<Setting> out{Setting{}};
  auto add = [&](const Setting& s) {
    if (!(out.back() == s)) out.push_back(s);
  };
  // n values from lo to hi (every lattice point when `every`), each snapped.
  auto span = [&](double lo, double hi, double step, auto snap, auto make) {
    if (hi < lo) return;
    const int n = every ? static_cast<int>(std::lround((hi - lo) / step)) + 1 : points;
    for (int i = 0; i < n; ++i) add(make(snap(n == 1 ? hi : lo + (hi - lo) * i / (n - 1))));
  };
  if (has(knobs, Knob::kClock)) {
    const double step = r.clock_step_mhz;
    span(
        r.lowest_cap_mhz(), r.highest_cap_mhz(), step,
        [&](double f) { return r.snap_clock_mhz(f); },
        [](double f) {
          return Setting{f, 0, ""};
        });
  }
  if (has(knobs, Knob::kPowerLimit) && r.max_limit_w > r.min_limit_w && r.default_limit_w > 0) {
    const double step = r.limit_step_w();
    span(
        r.lowest_limit_w(), r.highest_limit_w(), step, [&](double w) { return r.snap_limit_w(w); },
        [](double w) {
          return Setting{0, w, ""};
        });
  }
  if (has(knobs, Knob::kMode)) {
    for (std::size_t i = 0; i + 1 < r.modes.size(); ++i) out.push_back({0, 0, r.modes[i]});
  }
  return out;
}

}  // namespace

double SettingRange::limit_step_w() const {
  return std::max(1.0, std::round((max_limit_w - min_limit_w) / 100));
}

double SettingRange::snap_limit_w(double w) const {
  const double lo = std::round(min_limit_w), step = limit_step_w();
  return lo + std::round((w - lo) / step) * step;
}

double SettingRange::lowest_cap_mhz() const {
  return std::max(min_mhz, std::ceil(max_mhz * kLowestCapShare / clock_step_mhz) * clock_step_mhz);
}

double SettingRange::highest_cap_mhz() const {
  return std::floor((max_mhz - clock_step_mhz) / clock_step_mhz) * clock_step_mhz;
}

SettingRange with_device_limits(SettingRange r, const telemetry::DeviceInfo& d) {
  if (d.max_sm_clock_mhz.ok()) r.max_mhz = static_cast<double>(d.max_sm_clock_mhz.value);
  if (d.min_power_limit_mw.ok() && d.max_power_limit_mw.ok() && d.enforced_power_limit_mw.ok()) {
    r.min_limit_w = static_cast<double>(d.min_power_limit_mw.value) * 1e-3;
    r.max_limit_w = static_cast<double>(d.max_power_limit_mw.value) * 1e-3;
    r.default_limit_w = static_cast<double>(d.enforced_power_limit_mw.value) * 1e-3;
  }
  return r;
}

double SettingRange::snap_clock_mhz(double mhz) const {
  return std::round(mhz / clock_step_mhz) * clock_step_mhz;
}

std::vector<Setting> candidate_settings(const SettingRange& r, const std::vector<Knob>& knobs,
                                        int points) {
  if (points < 2 || points > 200) throw invalid_input("points", "expected 2 to 200 values a knob");
  return grid(r, knobs, points, false);
}

std::vector<Setting> exhaustive_settings(const SettingRange& r, const std::vector<Knob>& knobs) {
  return grid(r, knobs, 0, true);
}

std::size_t choose(const std::vector<Outcome>& o, const experiment::Objective& objective,
                   double max_slowdown, bool cautious) {
  std::size_t best = 0;
  const double base = o.empty() ? 0 : objective.score(o[0].ms, o[0].joules);
  double best_score = base;
  for (std::size_t i = 1; i < o.size(); ++i) {
    const double slow = (cautious ? o[i].time_ratio.hi : o[i].time_ratio.mid) - 1;
    if (max_slowdown >= 0 && slow > max_slowdown) continue;
    const double s = objective.score(o[i].ms, o[i].joules);
    if (s > base * (1 - kMinGain)) continue;  // not worth changing a setting for
    if (s < best_score) {
      best = i;
      best_score = s;
    }
  }
  return best;
}

}  // namespace powershape::advise
