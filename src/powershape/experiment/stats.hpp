#pragma once
#include <cstdint>
#include <vector>

namespace powershape::experiment {

double median(std::vector<double> v);

struct Interval {
  double lo = 0, mid = 0, hi = 0;
  bool excludes(double x) const { return x < lo || x > hi; }
};

// The geometric mean of paired ratios a[i] / b[i] with a bootstrap 95% interval: percentiles of
// `resamples` resamples (seeded) of the pairs' mean log ratio. A plain percentile interval is too
// narrow for few pairs (on 8 it holds a null effect ~89% of the time, not 95%), so the percentiles
// are the expanded ones (Hesterberg 2015): alpha'/2 = Phi(-sqrt(n / (n - 1)) t(alpha/2, n - 1)),
// which covers like a t interval on normal data and keeps the bootstrap's shape otherwise; and
// since resamples never reach past the pairs, the interval is at least Student's t interval on the
// log ratios (with under ~6 pairs the bootstrap alone held a null effect 48-88% of the time).
// Needs at least two pairs.
Interval ratio_interval(const std::vector<double>& a, const std::vector<double>& b, uint64_t seed,
                        int resamples = 4000);

// The two-sided tail probability alpha' / 2 of the expanded percentile interval for n pairs at
// level 1 - alpha (0.05 -> 0.0057 at n = 8).
double expanded_tail(int n, double alpha);

}  // namespace powershape::experiment
