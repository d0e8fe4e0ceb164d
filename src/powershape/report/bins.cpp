#include "powershape/report/bins.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace powershape::report {
namespace {

constexpr float kNone = std::numeric_limits<float>::quiet_NaN();

// Calls f(bin, value, overlap_ns) for every stretch of the step function inside the bins.
template <class F>
void for_each_held(const std::vector<analysis::Point>& pts, const Bins& b, F&& f) {
  const int64_t end = b.from_ns + b.width_ns * static_cast<int64_t>(b.count);
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const int64_t lo = std::max(pts[i].t_ns, b.from_ns);
    const int64_t hi = i + 1 < pts.size() ? std::min(pts[i + 1].t_ns, end) : end;
    if (hi <= lo) continue;
    const auto first = static_cast<std::size_t>((lo - b.from_ns) / b.width_ns);
    const auto last = static_cast<std::size_t>((hi - 1 - b.from_ns) / b.width_ns);
    for (std::size_t k = first; k <= last; ++k) {
      const int64_t bl = b.from_ns + static_cast<int64_t>(k) * b.width_ns;
      f(k, pts[i].value, std::min(hi, bl + b.width_ns) - std::max(lo, bl));
    }
  }
}

}  // namespace

Bins make_bins(int64_t from_ns, int64_t to_ns, std::size_t count) {
  Bins b;
  b.from_ns = from_ns;
  const int64_t span = std::max<int64_t>(to_ns - from_ns, 0) + 1;  // to_ns is inside
  b.width_ns = std::max<int64_t>(1, (span + static_cast<int64_t>(count) - 1) /
                                        static_cast<int64_t>(std::max<std::size_t>(count, 1)));
  b.count = static_cast<std::size_t>((span + b.width_ns - 1) / b.width_ns);
  return b;
}

Extremes bin_extremes(const std::vector<analysis::Point>& pts, const Bins& b, double scale) {
  Extremes e{std::vector<float>(b.count, kNone), std::vector<float>(b.count, kNone)};
  for_each_held(pts, b, [&](std::size_t k, int64_t v, int64_t) {
    const auto x = static_cast<float>(static_cast<double>(v) * scale);
    e.min[k] = std::isnan(e.min[k]) ? x : std::min(e.min[k], x);
    e.max[k] = std::isnan(e.max[k]) ? x : std::max(e.max[k], x);
  });
  return e;
}

std::vector<float> bin_fraction(const std::vector<analysis::Point>& pts, const Bins& b,
                                uint64_t bit) {
  std::vector<double> on(b.count, 0), covered(b.count, 0);
  for_each_held(pts, b, [&](std::size_t k, int64_t v, int64_t ns) {
    covered[k] += static_cast<double>(ns);
    if (static_cast<uint64_t>(v) & bit) on[k] += static_cast<double>(ns);
  });
  std::vector<float> out(b.count, kNone);
  for (std::size_t k = 0; k < b.count; ++k) {
    if (covered[k] > 0) out[k] = static_cast<float>(on[k] / covered[k]);
  }
  return out;
}

}  // namespace powershape::report
