#include "powershape/analysis/summary.hpp"

#include <algorithm>
#include <limits>
#include <set>

namespace powershape::analysis {
using telemetry::Signal;

namespace {

std::optional<double> counter_fraction(const trace::Trace& t, int gpu, Signal s, int64_t from,
                                       int64_t to) {
  auto pts = series(t, gpu, s);
  auto e = energy_from_counter(pts, from, to);  // same edge interpolation suits any counter
  if (e.method != Energy::Method::kCounter) return std::nullopt;
  return std::clamp(e.energy_mj / static_cast<double>(to - from), 0.0, 1.0);
}

}  // namespace

std::optional<double> Summary::reason(std::string_view n) const {
  for (const auto& [k, v] : reason_fraction) {
    if (k == n) return v;
  }
  return std::nullopt;
}

std::optional<double> Summary::power_capped_fraction() const {
  if (auto r = reason("sw_power_cap")) return r;
  return throttle_sw_power_fraction;
}

std::optional<double> Summary::thermal_fraction() const {
  auto sw = reason("sw_thermal"), hw = reason("hw_thermal");
  if (sw && hw) return std::max(*sw, *hw);
  return throttle_thermal_fraction;
}

Summary summarize(const trace::Trace& t, int gpu, const std::string& name, int64_t from,
                  int64_t to) {
  Summary s;
  s.name = name;
  s.gpu = gpu;
  s.begin_ns = from;
  s.end_ns = to;
  s.energy = window_energy(series(t, gpu, Signal::kEnergy), fine_power(t, gpu), from, to);
  if (s.energy.method != Energy::Method::kNone && to > from) {
    s.avg_power_w = s.energy.energy_mj / (static_cast<double>(to - from) * 1e-9) * 1e-3;
  }
  for (Signal p : {Signal::kPowerInstant, Signal::kDriverPower, Signal::kPowerUsage}) {
    for (const auto& h : held(series(t, gpu, p), from, to)) {
      s.peak_power_w = std::max(s.peak_power_w.value_or(0.0), static_cast<double>(h.value) * 1e-3);
    }
  }
  // Each reading is a mean over its own span (the 1 s average, a 20 ms buffer sample), which a
  // window shorter than that span does not line up with, so the readings' maximum can fall under
  // the window's average; the power was at least its average at some moment of the window.
  if (s.peak_power_w && s.avg_power_w) s.peak_power_w = std::max(*s.peak_power_w, *s.avg_power_w);
  s.sm_clock_mhz = distribution(held(series(t, gpu, Signal::kSmClock), from, to));
  auto reasons = held(series(t, gpu, Signal::kReasons), from, to);
  if (!reasons.empty()) {
    int64_t covered = 0;
    for (const auto& h : reasons) covered += h.duration_ns;
    for (const auto& r : telemetry::reason::kAll) {
      int64_t on = 0;
      for (const auto& h : reasons) {
        if (static_cast<uint64_t>(h.value) & r.bit) on += h.duration_ns;
      }
      s.reason_fraction.emplace_back(std::string(r.name),
                                     static_cast<double>(on) / static_cast<double>(covered));
    }
  }
  s.throttle_sw_power_fraction = counter_fraction(t, gpu, Signal::kThrottleSwPower, from, to);
  auto sw_th = counter_fraction(t, gpu, Signal::kThrottleSwThermal, from, to);
  auto hw_th = counter_fraction(t, gpu, Signal::kThrottleHwThermal, from, to);
  if (sw_th || hw_th) s.throttle_thermal_fraction = std::max(sw_th.value_or(0), hw_th.value_or(0));
  for (const auto& h : held(series(t, gpu, Signal::kGpuTemp), from, to)) {
    s.peak_temp_c = std::max(s.peak_temp_c.value_or(std::numeric_limits<int64_t>::min()), h.value);
  }
  return s;
}

std::vector<Summary> summarize(const trace::Trace& t) {
  std::set<int> gpus;
  for (const auto& row : t.samples) gpus.insert(row.gpu);
  std::vector<Summary> out;
  for (int g : gpus) {
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    for (const auto& row : t.samples) {
      if (row.gpu != g) continue;
      lo = std::min(lo, row.t_ns);
      hi = std::max(hi, row.t_ns);
    }
    out.push_back(summarize(t, g, "all", lo, hi));
  }
  for (const auto& r : t.regions) {
    for (int g : gpus) {
      if (r.gpu < 0 || r.gpu == g) out.push_back(summarize(t, g, r.name, r.begin_ns, r.end_ns));
    }
  }
  return out;
}

nlohmann::json to_json(const Summary& s) {
  nlohmann::json j = {{"name", s.name},
                      {"gpu", s.gpu},
                      {"begin_ns", s.begin_ns},
                      {"end_ns", s.end_ns},
                      {"duration_s", s.duration_s()},
                      {"energy_method", to_string(s.energy.method)},
                      {"energy_counter_updates", s.energy.counter_updates}};
  auto opt = [&](const char* k, const auto& v) {
    j[k] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  j["energy_j"] = s.energy.method == Energy::Method::kNone
                      ? nlohmann::json(nullptr)
                      : nlohmann::json(s.energy.energy_mj * 1e-3);
  opt("avg_power_w", s.avg_power_w);
  opt("peak_power_w", s.peak_power_w);
  if (s.sm_clock_mhz.covered_ns > 0) {
    j["sm_clock_mhz"] = {{"mean", s.sm_clock_mhz.mean}, {"p5", s.sm_clock_mhz.p5},
                         {"p50", s.sm_clock_mhz.p50},   {"p95", s.sm_clock_mhz.p95},
                         {"min", s.sm_clock_mhz.min},   {"max", s.sm_clock_mhz.max}};
  } else {
    j["sm_clock_mhz"] = nullptr;
  }
  j["reason_fraction"] = nlohmann::json::object();
  for (const auto& [k, v] : s.reason_fraction) j["reason_fraction"][k] = v;
  opt("power_capped_fraction", s.power_capped_fraction());
  opt("thermal_fraction", s.thermal_fraction());
  opt("peak_temp_c", s.peak_temp_c);
  return j;
}

nlohmann::json to_json(const std::vector<Summary>& s) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& x : s) j.push_back(to_json(x));
  return j;
}

}  // namespace powershape::analysis
