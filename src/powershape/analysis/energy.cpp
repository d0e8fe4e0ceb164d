#include "powershape/analysis/energy.hpp"

#include <algorithm>

namespace powershape::analysis {
namespace {

// The points at which the counter took a new value.
std::vector<Point> edges(const std::vector<Point>& counter) {
  std::vector<Point> out;
  for (const auto& p : counter) {
    if (out.empty() || p.value != out.back().value) out.push_back(p);
  }
  return out;
}

double at(const std::vector<Point>& e, int64_t t) {
  auto hi = std::upper_bound(e.begin(), e.end(), t,
                             [](int64_t x, const Point& p) { return x < p.t_ns; });
  if (hi == e.begin()) hi = e.begin() + 1;
  if (hi == e.end()) hi = e.end() - 1;
  const Point& a = *(hi - 1);
  const Point& b = *hi;
  double slope = static_cast<double>(b.value - a.value) / static_cast<double>(b.t_ns - a.t_ns);
  return static_cast<double>(a.value) + slope * static_cast<double>(t - a.t_ns);
}

}  // namespace

Energy energy_from_counter(const std::vector<Point>& counter, int64_t from_ns, int64_t to_ns) {
  Energy out;
  std::vector<Point> e = edges(counter);
  if (e.size() < 2 || to_ns <= from_ns) return out;
  out.method = Energy::Method::kCounter;
  out.energy_mj = std::max(0.0, at(e, to_ns) - at(e, from_ns));
  out.counter_updates = static_cast<int>(std::count_if(
      e.begin(), e.end(), [&](const Point& p) { return p.t_ns >= from_ns && p.t_ns < to_ns; }));
  return out;
}

Energy energy_from_power(const std::vector<Point>& power_mw, int64_t from_ns, int64_t to_ns) {
  Energy out;
  auto h = held(power_mw, from_ns, to_ns);
  if (h.empty()) return out;
  out.method = Energy::Method::kPower;
  for (const auto& x : h) {
    out.energy_mj += static_cast<double>(x.value) * static_cast<double>(x.duration_ns) * 1e-9;
  }
  return out;
}

std::string to_string(Energy::Method m) {
  switch (m) {
    case Energy::Method::kCounter: return "counter";
    case Energy::Method::kPower: return "power";
    case Energy::Method::kNone: return "none";
  }
  return "none";
}

}  // namespace powershape::analysis
