#include "powershape/experiment/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

#include "powershape/analysis/series.hpp"
#include "powershape/analysis/step_response.hpp"
#include "powershape/util/error.hpp"

namespace powershape::experiment {
namespace {

// The last n windows agree within tol; or, where a power controller hunts around its limit (a
// real H200's clock and power wander 1-3% between half-second windows for good), the last n
// windows' mean agrees with the n before it: nothing drifts any more.
bool settled(const std::vector<Measurement>& w, int n, double tol) {
  if (static_cast<int>(w.size()) < n) return false;
  const auto mean = [&](auto get, int from_end) {
    double sum = 0;
    for (auto it = w.end() - from_end; it != w.end() - from_end + n; ++it) sum += get(*it);
    return sum / n;
  };
  auto holds = [&](auto get) {
    double lo = 1e300, hi = -1e300;
    for (auto it = w.end() - n; it != w.end(); ++it) {
      lo = std::min(lo, get(*it));
      hi = std::max(hi, get(*it));
    }
    const double last = mean(get, n);
    if (hi - lo <= tol * last) return true;
    return static_cast<int>(w.size()) >= 2 * n && std::abs(last - mean(get, 2 * n)) <= tol * last;
  };
  return holds([](const Measurement& m) { return m.sm_clock_mhz; }) &&
         holds([](const Measurement& m) { return m.avg_power_w; });
}

std::string verdict(const Interval& i, double min_effect, const char* below, const char* above) {
  if (i.hi >= 1 && i.lo <= 1) return "no difference";
  if (std::abs(i.mid - 1) < min_effect) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "within %g%%", min_effect * 100);
    return buf;
  }
  return i.hi < 1 ? below : above;
}

}  // namespace

std::string heat_warmup(const Backend& backend, double window_s, Design& d) {
  const double tau = backend.thermal_time_constant_s();
  if (!(tau > window_s)) return "";
  d.warmup_min_s = std::min(4 * tau, 600.0);
  d.warmup_max_s = std::max(d.warmup_max_s, d.warmup_min_s);
  std::ostringstream m;
  m << "heat: the device's slowest thermal time constant is " << std::setprecision(2) << tau
    << std::setprecision(6) << " s, longer than " << window_s << " s windows: warming up "
    << std::lround(d.warmup_min_s) << " s first";
  if (backend.each_config_apart()) {
    m << " on each configuration's own die (the model holds a slowdown or a brake from one window "
         "to the next: each configuration is measured as if it ran alone, as separate runs "
         "would be)";
  } else {
    m << ", and each window then alternates configurations on one die, whose heat is their "
         "mix's (a window of "
      << std::lround(d.warmup_min_s) << " s or more measures each on its own heat)";
  }
  return m.str();
}

void warm_up(Backend& backend, const Design& d, Result& r) {
  // Warm-up windows hold five iterations at least, so that a slow configuration's windows are
  // comparable with each other. Where each configuration has a device of its own, each warms
  // up so on its own, the baseline first; settled means all of them did.
  std::vector<std::size_t> order{d.baseline};
  if (backend.each_config_apart()) {
    for (std::size_t c = 0; c < backend.config_count(); ++c)
      if (c != d.baseline) order.push_back(c);
  }
  bool all_settled = true;
  for (std::size_t c : order) {
    std::vector<Measurement> own;
    double window = d.warmup_window_s, spent = 0;
    bool ok = false;
    while (spent < d.warmup_max_s && (!ok || spent < d.warmup_min_s)) {
      Measurement m = backend.measure(c, window);
      window = std::max(window, 5 * m.ms_per_iteration * 1e-3);
      spent += m.seconds;
      own.push_back(m);
      ok = settled(own, d.settle_windows, d.settle_tolerance);
    }
    r.warmup_s += spent;
    r.warmup.insert(r.warmup.end(), own.begin(), own.end());
    all_settled = all_settled && ok;
  }
  r.settled = all_settled;
}

Result run_design(Backend& backend, const Design& d) {
  const std::size_t n = backend.config_count();
  if (n == 0) throw invalid_input("the design has no configurations");
  if (d.baseline >= n) throw invalid_input("the baseline is not one of the configurations");
  if (d.rounds < 2) throw invalid_input("a design needs two rounds or more");
  if (!(d.window_s > 0)) throw invalid_input("the window must be positive");
  if (!(d.min_effect >= 0 && d.min_effect < 1))
    throw invalid_input("the minimum effect must be in [0, 1)");
  // Bounded before it starts: rounds x configurations x (window + the longest cool-down) plus
  // the warm-up, within a day, on any device.
  const double planned = static_cast<double>(d.rounds) * static_cast<double>(n) *
                             (d.window_s + (d.cooldown_c > 0 ? 60 : 0)) +
                         d.warmup_max_s;
  if (planned > kMaxDesignSeconds) {
    std::ostringstream m;
    m << d.rounds << " rounds of " << n << " configurations in " << d.window_s
      << " s windows plan up to " << std::lround(planned)
      << " s of measurement, more than a day: fewer rounds, configurations or seconds";
    throw invalid_input(m.str());
  }
  Result r;
  r.backend = backend.describe();
  r.simulated = backend.simulated();
  r.device = backend.device_json();
  r.baseline = d.baseline;

  try {
    warm_up(backend, d, r);
    std::mt19937_64 rng(d.seed);
    std::vector<std::size_t> order(n);
    double spent = 0;
    for (int round = 0; round < d.rounds; ++round) {
      std::iota(order.begin(), order.end(), 0);
      if (d.rotate)
        std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(round % n),
                    order.end());
      else
        std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t c : order) {
        if (d.cooldown_c > 0) {
          for (int i = 0; i < 600; ++i) {
            auto t = backend.temperature_c();
            if (!t || *t <= d.cooldown_c) break;
            backend.idle(0.1);
          }
        }
        Measurement m = backend.measure(c, d.window_s);
        m.round = round;
        r.measurements.push_back(m);
        spent += m.seconds;
      }
      r.rounds_done = round + 1;
      if (d.on_round) d.on_round(round + 1, d.rounds, spent);
    }
  } catch (const std::exception&) {
    if (!d.interrupted || !d.interrupted()) throw;
    r.interrupted = true;
  }
  if (r.rounds_done < 2) return r;  // nothing to compare; what was measured is kept

  auto of = [&](std::size_t c, auto get) {
    std::vector<double> v(static_cast<std::size_t>(r.rounds_done));
    for (const auto& m : r.measurements) {
      if (m.config == c && m.round < r.rounds_done) v[static_cast<std::size_t>(m.round)] = get(m);
    }
    return v;
  };
  auto ms = [](const Measurement& m) { return m.ms_per_iteration; };
  auto joules = [](const Measurement& m) { return m.j_per_iteration(); };
  for (std::size_t c = 0; c < n; ++c) {
    ConfigResult x;
    x.name = backend.config_name(c);
    x.ms_per_iteration = median(of(c, ms));
    x.j_per_iteration = median(of(c, joules));
    x.avg_power_w = median(of(c, [](const Measurement& m) { return m.avg_power_w; }));
    x.sm_clock_mhz = median(of(c, [](const Measurement& m) { return m.sm_clock_mhz; }));
    x.power_capped = median(of(c, [](const Measurement& m) { return m.power_capped; }));
    x.thermal_throttled = median(of(c, [](const Measurement& m) { return m.thermal_throttled; }));
    x.peak_temp_c = median(of(c, [](const Measurement& m) { return m.peak_temp_c; }));
    x.compute_tflops = median(of(c, [](const Measurement& m) { return m.compute_tflops; }));
    x.extra_gib = median(of(c, [](const Measurement& m) { return m.extra_gib; }));
    x.time_ratio = ratio_interval(of(c, ms), of(d.baseline, ms), d.seed + c);
    x.energy_ratio = ratio_interval(of(c, joules), of(d.baseline, joules), d.seed + 1000 + c);
    x.time_verdict =
        c == d.baseline ? "baseline" : verdict(x.time_ratio, d.min_effect, "faster", "slower");
    x.energy_verdict = c == d.baseline
                           ? "baseline"
                           : verdict(x.energy_ratio, d.min_effect, "less energy", "more energy");
    r.configs.push_back(x);
  }
  // The best leaves the baseline only for a configuration whose difference is resolved and at
  // least the minimum effect.
  r.best_time = r.best_energy = d.baseline;
  for (std::size_t c = 0; c < n; ++c) {
    const auto& x = r.configs[c];
    if (x.time_verdict == "faster" && x.ms_per_iteration < r.configs[r.best_time].ms_per_iteration)
      r.best_time = c;
    if (x.energy_verdict == "less energy" &&
        x.j_per_iteration < r.configs[r.best_energy].j_per_iteration) {
      r.best_energy = c;
    }
  }
  return r;
}

std::optional<double> step_response_ms(Backend& backend, std::size_t i) {
  backend.idle(1.5);
  const int64_t step_ns = backend.now_ns();
  backend.measure(i, 1.5);
  const trace::Trace t = backend.recorded();
  double max_mhz = 0;
  if (!t.devices.empty() && t.devices[0].max_sm_clock_mhz.ok()) {
    max_mhz = static_cast<double>(t.devices[0].max_sm_clock_mhz.value);
  } else {
    for (const auto& p : analysis::series(t, 0, telemetry::Signal::kSmClock)) {
      if (p.t_ns < step_ns) max_mhz = std::max(max_mhz, static_cast<double>(p.value));
    }
  }
  if (max_mhz <= 0) return std::nullopt;
  return analysis::step_response_ms(t, 0, 0, static_cast<int64_t>(max_mhz * 0.95), step_ns);
}

nlohmann::json to_json(const Interval& i) { return {{"lo", i.lo}, {"ratio", i.mid}, {"hi", i.hi}}; }

nlohmann::json to_json(const Result& r) {
  nlohmann::json j = {{"backend", r.backend},         {"simulated", r.simulated},
                      {"device", r.device},           {"warmup_s", r.warmup_s},
                      {"settled", r.settled},         {"baseline", r.baseline},
                      {"best_time", r.best_time},     {"best_energy", r.best_energy},
                      {"rounds_done", r.rounds_done}, {"interrupted", r.interrupted}};
  j["configs"] = nlohmann::json::array();
  for (const auto& c : r.configs) {
    j["configs"].push_back({{"name", c.name},
                            {"ms_per_iteration", c.ms_per_iteration},
                            {"j_per_iteration", c.j_per_iteration},
                            {"avg_power_w", c.avg_power_w},
                            {"sm_clock_mhz", c.sm_clock_mhz},
                            {"power_capped", c.power_capped},
                            {"thermal_throttled", c.thermal_throttled},
                            {"peak_temp_c", c.peak_temp_c},
                            {"compute_tflops", c.compute_tflops},
                            {"extra_gib", c.extra_gib},
                            {"time_ratio", to_json(c.time_ratio)},
                            {"energy_ratio", to_json(c.energy_ratio)},
                            {"time_verdict", c.time_verdict},
                            {"energy_verdict", c.energy_verdict}});
  }
  for (const char* k : {"warmup", "measurements"}) {
    j[k] = nlohmann::json::array();
    for (const auto& m : (std::string(k) == "warmup" ? r.warmup : r.measurements))
      j[k].push_back(to_json(m));
  }
  return j;
}

trace::Trace record_as_found(Backend& backend, double seconds) {
  backend.idle(1);
  backend.measure(0, seconds);
  backend.idle(1);
  return backend.recorded();
}

}  // namespace powershape::experiment
