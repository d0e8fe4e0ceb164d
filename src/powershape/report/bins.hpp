#pragma once
// A signal reduced to a fixed number of equal time bins, so that a page can draw an hour of 1 ms
// samples without holding them: each bin keeps the least and the greatest value the signal held
// during it (readings hold until the next one, as everywhere in powershape). The readings go by
// once, in time order, so that a recording never has to be held whole.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "powershape/analysis/series.hpp"
#include "powershape/telemetry/signal.hpp"

namespace powershape::report {

struct Bins {
  int64_t from_ns = 0;
  int64_t width_ns = 1;
  std::size_t count = 0;
};

// At most `count` bins of equal width (1 ns at least) from from_ns past to_ns, which the last one
// holds: a reading at to_ns shows.
Bins make_bins(int64_t from_ns, int64_t to_ns, std::size_t count);

// A step function's stretches inside the bins: f(bin, value, overlap_ns) for each, as its
// readings come (in time order), the last one's at finish().
class HeldBins {
 public:
  explicit HeldBins(const Bins& b) : b_(b) {}
  template <class F>
  void add(analysis::Point p, F&& f) {
    if (last_) each(last_->t_ns, p.t_ns, last_->value, f);
    last_ = p;
  }
  template <class F>
  void finish(F&& f) {
    if (last_)
      each(last_->t_ns, b_.from_ns + b_.width_ns * static_cast<int64_t>(b_.count), last_->value, f);
    last_.reset();
  }
  const Bins& bins() const { return b_; }

 private:
  template <class F>
  void each(int64_t lo, int64_t hi, int64_t v, F& f) const {
    lo = std::max(lo, b_.from_ns);
    hi = std::min(hi, b_.from_ns + b_.width_ns * static_cast<int64_t>(b_.count));
    if (hi <= lo) return;
    const auto first = static_cast<std::size_t>((lo - b_.from_ns) / b_.width_ns);
    const auto last = static_cast<std::size_t>((hi - 1 - b_.from_ns) / b_.width_ns);
    for (std::size_t k = first; k <= last; ++k) {
      const int64_t bl = b_.from_ns + static_cast<int64_t>(k) * b_.width_ns;
      f(k, v, std::min(hi, bl + b_.width_ns) - std::max(lo, bl));
    }
  }
  Bins b_;
  std::optional<analysis::Point> last_;
};

struct Extremes {
  std::vector<float> min, max;  // NaN before the signal's first reading
};

// Each bin's extremes, the values multiplied by `scale` (1e-3: mW to W).
class ExtremeBins {
 public:
  ExtremeBins(const Bins& b, double scale);
  void add(analysis::Point p);
  Extremes finish();

 private:
  void put(std::size_t k, int64_t v);
  HeldBins held_;
  double scale_;
  Extremes e_;
};

// The fraction of each bin during which each bit NVML names (telemetry::reason::kAll) was set in
// the clock-event reasons; NaN where the signal has no reading yet.
class FractionBins {
 public:
  explicit FractionBins(const Bins& b);
  void add(analysis::Point p);
  void finish();
  std::vector<float> fraction(uint64_t bit) const;
  uint64_t seen() const { return seen_; }  // the bits any reading had

 private:
  void put(std::size_t k, int64_t v, int64_t ns);
  HeldBins held_;
  std::vector<double> covered_;
  std::vector<std::vector<double>> on_;  // per bit (0-63), made when first set
  uint64_t seen_ = 0;
};

}  // namespace powershape::report
