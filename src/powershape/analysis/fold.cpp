#include "powershape/analysis/fold.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "powershape/util/error.hpp"

namespace powershape::analysis {
namespace {

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

double at(const std::vector<double>& sorted, double q) {
  return sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)];
}

}  // namespace

Fold fold_power(const PowerSeries& p, const std::vector<std::pair<double, double>>& regions_s,
                double bin_s, double scale) {
  if (!(bin_s > 0) || !std::isfinite(bin_s))
    throw invalid_input("fold bin", "must be a positive number of seconds");
  // The regions the series covers any of, and their median length: the bins are known, and
  // checked, before a sample is placed.
  const double from = p.t0_s, to = p.t0_s + p.duration_s();
  std::vector<std::pair<double, double>> regions;
  for (const auto& r : regions_s)
    if (r.second > r.first && r.second > from && r.first < to) regions.push_back(r);
  if (regions.empty()) throw invalid_input("no power sample falls inside the regions to fold");
  std::sort(regions.begin(), regions.end());
  std::vector<double> lengths;
  for (const auto& r : regions) lengths.push_back(r.second - r.first);
  std::nth_element(lengths.begin(),
                   lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() / 2),
                   lengths.end());
  Fold f;
  f.regions = regions.size();
  f.median_length_s = lengths[lengths.size() / 2];
  f.bin_s = bin_s;
  // A sample as long as a quarter of the region is a mean over much of it: no shape to show.
  if (p.dt_s * 4 > f.median_length_s)
    throw invalid_input("fold", "samples of " + seconds(p.dt_s) +
                                    " are too coarse for regions of " + seconds(f.median_length_s));
  const double count = std::ceil(f.median_length_s / bin_s);
  if (count > 10'000)
    throw invalid_input(
        "fold bin", "gives more than 10000 bins over a region of " + seconds(f.median_length_s));
  std::vector<std::vector<double>> bins(static_cast<std::size_t>(std::max(1.0, count)));
  // Each sample in the region its middle falls in; regions may nest or touch: the latest begun.
  std::size_t next = 0, placed = 0;
  std::ptrdiff_t current = -1;
  for (std::size_t i = 0; i < p.w.size(); ++i) {
    const double t = p.t0_s + (static_cast<double>(i) + 0.5) * p.dt_s;
    while (next < regions.size() && regions[next].first <= t)
      current = static_cast<std::ptrdiff_t>(next++);
    if (current < 0) continue;
    const auto& r = regions[static_cast<std::size_t>(current)];
    const double since = t - r.first;
    if (t >= r.second || since >= f.median_length_s) continue;
    const auto k = static_cast<std::size_t>(since / bin_s);
    if (k < bins.size()) bins[k].push_back(p.w[i] * scale), ++placed;
  }
  if (placed == 0) throw invalid_input("no power sample falls inside the regions to fold");
  for (std::size_t k = 0; k < bins.size(); ++k) {
    auto& v = bins[k];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    f.bins.push_back({static_cast<double>(k) * bin_s, v.size(), v.front(), at(v, 0.1), at(v, 0.5),
                      at(v, 0.9), v.back()});
  }
  return f;
}

nlohmann::json to_json(const Fold& f, const std::string& region) {
  nlohmann::json bins = nlohmann::json::array();
  for (const auto& b : f.bins)
    bins.push_back({{"from_s", b.from_s},
                    {"n", b.n},
                    {"min_w", b.min_w},
                    {"p10_w", b.p10_w},
                    {"median_w", b.median_w},
                    {"p90_w", b.p90_w},
                    {"max_w", b.max_w}});
  return {{"region", region},
          {"regions", f.regions},
          {"median_length_s", f.median_length_s},
          {"bin_s", f.bin_s},
          {"bins", bins}};
}

}  // namespace powershape::analysis
