#pragma once
#include <cstdint>
#include <vector>

namespace powershape::experiment {

double median(std::vector<double> v);

struct Interval {
  double lo = 0, mid = 0, hi = 0;
  bool excludes(double x) const { return x < lo || x > hi; }
};

// The geometric mean of paired ratios a[i] / b[i] with a bootstrap 95% interval (percentiles of
// `resamples` resamples of the pairs, seeded). Needs at least two pairs.
Interval ratio_interval(const std::vector<double>& a, const std::vector<double>& b, uint64_t seed,
                        int resamples = 4000);

}  // namespace powershape::experiment
