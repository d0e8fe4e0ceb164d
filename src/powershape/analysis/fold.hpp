#pragma once
// Where in a step the power sits: a recording's power folded over the regions a job marked (its
// steps), each sample placed at its time since its region began. A floor or chunking can only
// lift what is low: this says which stretch of the step is (the gap, its edges, a memory-bound
// loss), and which is high enough that only a power limit brings it down.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "powershape/analysis/power_series.hpp"

namespace powershape::analysis {

// The samples whose middles fall in [from_s, from_s + bin_s) of their regions.
struct FoldBin {
  double from_s = 0;
  std::size_t n = 0;
  double min_w = 0, p10_w = 0, median_w = 0, p90_w = 0, max_w = 0;
};

struct Fold {
  std::size_t regions = 0;     // the regions the series covers some of
  double median_length_s = 0;  // of those regions
  double bin_s = 0;
  std::vector<FoldBin> bins;  // from 0 to the median length; a bin no sample fell in is left out
};

// Each sample of `p` inside a region of `regions_s` (begin, end on p's clock) at its time since
// that region's begin, binned by `bin_s` up to the regions' median length (a longer region's
// tail is left out). Throws (invalid input) for a bin_s that is not positive, more than 10,000
// bins, no sample inside any region, or samples longer than a quarter of the median region.
// The power is scaled by `scale` (a fleet of the recording, as swing's figures are).
Fold fold_power(const PowerSeries& p, const std::vector<std::pair<double, double>>& regions_s,
                double bin_s, double scale = 1);

// The fold as JSON: the region's name, how many, their median length, and each bin's figures.
nlohmann::json to_json(const Fold& f, const std::string& region);

}  // namespace powershape::analysis
