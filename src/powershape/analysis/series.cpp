#include "powershape/analysis/series.hpp"

#include <algorithm>

namespace powershape::analysis {

std::vector<Point> series(const trace::Trace& t, int gpu, telemetry::Signal s) {
  std::vector<Point> out;
  for (const auto& row : t.samples) {
    if (row.gpu == gpu && row[s].ok()) out.push_back({row.t_ns, row[s].value});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Point& a, const Point& b) { return a.t_ns < b.t_ns; });
  return out;
}

std::vector<Point> fine_power(const trace::Trace& t, int gpu) {
  for (auto s : {telemetry::Signal::kDriverPower, telemetry::Signal::kPowerInstant,
                 telemetry::Signal::kPowerUsage}) {
    auto pts = series(t, gpu, s);
    if (!pts.empty()) return pts;
  }
  return {};
}

std::vector<Held> held(const std::vector<Point>& pts, int64_t from_ns, int64_t to_ns) {
  std::vector<Held> out;
  auto first = std::upper_bound(pts.begin(), pts.end(), from_ns,
                                [](int64_t t, const Point& p) { return t < p.t_ns; });
  if (first != pts.begin()) --first;  // the reading in force at from_ns
  for (auto it = first; it != pts.end() && it->t_ns < to_ns; ++it) {
    int64_t begin = std::max(it->t_ns, from_ns);
    int64_t end = (it + 1 != pts.end()) ? std::min((it + 1)->t_ns, to_ns) : to_ns;
    if (end > begin) out.push_back({it->value, end - begin});
  }
  return out;
}

Distribution distribution(std::vector<Held> h) {
  Distribution d;
  if (h.empty()) return d;
  std::sort(h.begin(), h.end(), [](const Held& a, const Held& b) { return a.value < b.value; });
  double sum = 0;
  for (const auto& x : h) {
    d.covered_ns += x.duration_ns;
    sum += static_cast<double>(x.value) * static_cast<double>(x.duration_ns);
  }
  if (d.covered_ns == 0) return d;
  d.mean = sum / static_cast<double>(d.covered_ns);
  d.min = h.front().value;
  d.max = h.back().value;
  auto quantile = [&](double q) {
    double target = q * static_cast<double>(d.covered_ns);
    double acc = 0;
    for (const auto& x : h) {
      acc += static_cast<double>(x.duration_ns);
      if (acc >= target) return static_cast<double>(x.value);
    }
    return static_cast<double>(h.back().value);
  };
  d.p5 = quantile(0.05);
  d.p50 = quantile(0.50);
  d.p95 = quantile(0.95);
  return d;
}

}  // namespace powershape::analysis
