#include "powershape/analysis/power_series.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "powershape/util/error.hpp"

namespace powershape::analysis {
namespace {

using telemetry::Signal;

// A step function (value i from times[i] until times[i + 1]; the last one ends at `end_s`)
// averaged over each interval of the grid.
std::vector<double> average_step(const std::vector<double>& times, const std::vector<double>& vals,
                                 double end_s, double t0_s, double dt_s, std::size_t n) {
  std::vector<double> out(n, 0.0);
  std::size_t j = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = t0_s + dt_s * static_cast<double>(i), b = a + dt_s;
    while (j + 1 < times.size() && times[j + 1] <= a) ++j;
    double acc = 0;
    for (std::size_t k = j; k < times.size() && times[k] < b; ++k) {
      const double from = std::max(a, times[k]);
      const double to = std::min(b, k + 1 < times.size() ? times[k + 1] : end_s);
      if (to > from) acc += vals[k] * (to - from);
    }
    out[i] = acc / dt_s;
  }
  return out;
}

}  // namespace

Signal power_signal(const PowerCounts& c) {
  // Of the fast signals, the one read most often; else the averages.
  if (c.instant + c.driver > 0)
    return c.driver > c.instant ? Signal::kDriverPower : Signal::kPowerInstant;
  if (c.usage > 0) return Signal::kPowerUsage;
  if (c.average > 0) return Signal::kPowerAverage;
  throw invalid_input(
      "no power readings (power_instant, driver_power, power_usage or "
      "power_average)");
}

void PowerCounts::add(const telemetry::Sample& row) {
  instant += row[Signal::kPowerInstant].ok();
  driver += row[Signal::kDriverPower].ok();
  usage += row[Signal::kPowerUsage].ok();
  average += row[Signal::kPowerAverage].ok();
}

Signal power_signal(const trace::Trace& t) {
  PowerCounts c;
  for (const auto& row : t.samples) c.add(row);
  return power_signal(c);
}

PowerSeries readings_grid(double from_s, double to_s, double dt_s, double most_samples) {
  const double span = to_s - from_s;
  if (!(span >= 2 * dt_s))
    throw invalid_input("the power readings share " + std::to_string(std::max(span, 0.0)) +
                        " s, less than two intervals of " + std::to_string(dt_s) + " s");
  if (span / dt_s > most_samples)
    throw invalid_input("the power readings span " + std::to_string(span) + " s: more than " +
                        std::to_string(static_cast<int64_t>(most_samples)) + " intervals of " +
                        std::to_string(dt_s) + " s; analyse it coarser");
  return {from_s, dt_s,
          std::vector<double>(static_cast<std::size_t>(std::floor(span / dt_s)), 0.0)};
}

PowerSeries sum_readings(const std::vector<Readings>& sources, double dt_s) {
  if (!(dt_s > 0) || !std::isfinite(dt_s)) throw invalid_input("resolution", "must be above 0 s");
  double from = -INFINITY, to = INFINITY;
  int used = 0;
  for (const auto& r : sources) {
    if (r.t_s.size() < 2) continue;
    from = std::max(from, r.t_s.front());
    to = std::min(to, r.t_s.back());
    ++used;
  }
  if (used == 0) throw invalid_input("fewer than two power readings in every source");
  PowerSeries out = readings_grid(from, to, dt_s);
  const std::size_t n = out.w.size();
  for (const auto& r : sources) {
    if (r.t_s.size() < 2) continue;
    const auto part = average_step(r.t_s, r.w, r.t_s.back(), from, dt_s, n);
    for (std::size_t i = 0; i < n; ++i) out.w[i] += part[i];
  }
  return out;
}

PowerSeries resample(const PowerSeries& s, double t0_s, double dt_s, std::size_t n) {
  std::vector<double> times(s.w.size());
  for (std::size_t i = 0; i < s.w.size(); ++i) times[i] = s.t0_s + s.dt_s * static_cast<double>(i);
  return {t0_s, dt_s, average_step(times, s.w, s.t0_s + s.duration_s(), t0_s, dt_s, n)};
}

PowerSeries sum_on_time(const std::vector<PowerSeries>& parts) {
  if (parts.empty()) throw invalid_input("no power series to add");
  double from = -INFINITY, to = INFINITY;
  for (const auto& p : parts) {
    from = std::max(from, p.t0_s);
    to = std::min(to, p.t0_s + p.duration_s());
  }
  const double dt = parts.front().dt_s;
  if ((to - from) / dt > kMaxSamples)
    throw invalid_input("the recordings overlap for " + std::to_string(to - from) +
                        " s: too many intervals of " + std::to_string(dt) +
                        " s; analyse it coarser");
  if (!(to - from >= 2 * dt))
    throw invalid_input("the recordings overlap for " + std::to_string(std::max(to - from, 0.0)) +
                        " s, less than two intervals of " + std::to_string(dt) + " s");
  const auto n = static_cast<std::size_t>(std::floor((to - from) / dt));
  PowerSeries out{from, dt, std::vector<double>(n, 0.0)};
  for (const auto& p : parts) {
    const auto r = resample(p, from, dt, n);
    for (std::size_t i = 0; i < n; ++i) out.w[i] += r.w[i];
  }
  return out;
}

}  // namespace powershape::analysis
