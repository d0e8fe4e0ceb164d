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

// The integral of a power step function over [t0, t1), in mJ; negative when t1 < t0.
double integral_mj(const std::vector<Point>& power_mw, int64_t t0, int64_t t1) {
  if (t1 < t0) return -integral_mj(power_mw, t1, t0);
  double mj = 0;
  for (const auto& h : held(power_mw, t0, t1)) {
    mj += static_cast<double>(h.value) * static_cast<double>(h.duration_ns) * 1e-9;
  }
  return mj;
}

bool covers(const std::vector<Point>& power_mw, int64_t t0, int64_t t1) {
  return !power_mw.empty() && power_mw.front().t_ns <= std::min(t0, t1);
}

double at(const std::vector<Point>& e, int64_t t, const std::vector<Point>& power_mw) {
  auto hi =
      std::upper_bound(e.begin(), e.end(), t, [](int64_t x, const Point& p) { return x < p.t_ns; });
  const bool before = hi == e.begin(), after = hi == e.end();
  if (before) hi = e.begin() + 1;
  if (after) hi = e.end() - 1;
  const Point& a = *(hi - 1);
  const Point& b = *hi;
  const double rise = static_cast<double>(b.value - a.value);
  if (covers(power_mw, a.t_ns, t)) {
    if (before) return static_cast<double>(a.value) - integral_mj(power_mw, t, a.t_ns);
    if (after) return static_cast<double>(b.value) + integral_mj(power_mw, b.t_ns, t);
    double whole = integral_mj(power_mw, a.t_ns, b.t_ns);
    if (whole > 0)
      return static_cast<double>(a.value) + rise * integral_mj(power_mw, a.t_ns, t) / whole;
  }
  double slope = rise / static_cast<double>(b.t_ns - a.t_ns);
  return static_cast<double>(a.value) + slope * static_cast<double>(t - a.t_ns);
}

// energy_from_counter over the counter's edges.
Energy from_edges(const std::vector<Point>& e, int64_t from_ns, int64_t to_ns,
                  const std::vector<Point>& power_mw) {
  Energy out;
  if (e.size() < 2 || to_ns <= from_ns) return out;
  out.method = Energy::Method::kCounter;
  out.energy_mj = std::max(0.0, at(e, to_ns, power_mw) - at(e, from_ns, power_mw));
  out.counter_updates = static_cast<int>(std::count_if(
      e.begin(), e.end(), [&](const Point& p) { return p.t_ns >= from_ns && p.t_ns < to_ns; }));
  return out;
}

}  // namespace

Energy energy_from_counter(const std::vector<Point>& counter, int64_t from_ns, int64_t to_ns,
                           const std::vector<Point>& power_mw) {
  return from_edges(edges(counter), from_ns, to_ns, power_mw);
}

Energy energy_from_power(const std::vector<Point>& power_mw, int64_t from_ns, int64_t to_ns) {
  Energy out;
  if (power_mw.empty() || to_ns <= from_ns) return out;
  out.method = Energy::Method::kPower;
  auto add = [&](int64_t a, int64_t b, int64_t mw) {
    a = std::max(a, from_ns);
    b = std::min(b, to_ns);
    if (b > a) out.energy_mj += static_cast<double>(mw) * static_cast<double>(b - a) * 1e-9;
  };
  // Reading i covers (t[i-1], t[i]]; the first also covers the window before it, the last the
  // window after it.
  add(from_ns, power_mw.front().t_ns, power_mw.front().value);
  for (std::size_t i = 1; i < power_mw.size(); ++i) {
    add(power_mw[i - 1].t_ns, power_mw[i].t_ns, power_mw[i].value);
  }
  add(power_mw.back().t_ns, to_ns, power_mw.back().value);
  return out;
}

Energy window_energy(const std::vector<Point>& counter, const std::vector<Point>& power_mw,
                     int64_t from_ns, int64_t to_ns) {
  const std::vector<Point> e = edges(counter);
  if (e.size() >= 2 && covers(power_mw, from_ns, from_ns)) {
    std::vector<int64_t> gaps;
    for (std::size_t i = 1; i < e.size(); ++i) gaps.push_back(e[i].t_ns - e[i - 1].t_ns);
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                     gaps.end());
    const int64_t spacing = gaps[gaps.size() / 2];
    if (to_ns - from_ns < kCounterMinSpacings * spacing)
      return energy_from_power(power_mw, from_ns, to_ns);
  }
  Energy c = from_edges(e, from_ns, to_ns, power_mw);
  return c.method == Energy::Method::kNone ? energy_from_power(power_mw, from_ns, to_ns) : c;
}

std::string to_string(Energy::Method m) {
  switch (m) {
    case Energy::Method::kCounter:
      return "counter";
    case Energy::Method::kPower:
      return "power";
    case Energy::Method::kNone:
      return "none";
  }
  return "none";
}

}  // namespace powershape::analysis
