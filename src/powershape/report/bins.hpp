#pragma once
// A signal reduced to a fixed number of equal time bins, so that a page can draw an hour of 1 ms
// samples without holding them: each bin keeps the least and the greatest value the signal held
// during it (readings hold until the next one, as everywhere in powershape).
#include <cstdint>
#include <vector>

#include "powershape/analysis/series.hpp"

namespace powershape::report {

struct Bins {
  int64_t from_ns = 0;
  int64_t width_ns = 1;
  std::size_t count = 0;
};

// At most `count` bins of equal width (1 ns at least) from from_ns past to_ns, which the last one
// holds: a reading at to_ns shows.
Bins make_bins(int64_t from_ns, int64_t to_ns, std::size_t count);

struct Extremes {
  std::vector<float> min, max;  // NaN before the signal's first reading
};
// Each bin's extremes, the values multiplied by `scale` (1e-3: mW to W).
Extremes bin_extremes(const std::vector<analysis::Point>& pts, const Bins& b, double scale);

// The fraction of each bin during which `bit` was set in a bitmask signal (clock-event reasons);
// NaN where the signal has no reading yet.
std::vector<float> bin_fraction(const std::vector<analysis::Point>& pts, const Bins& b,
                                uint64_t bit);

}  // namespace powershape::report
