#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/analysis/series.hpp"

namespace powershape::analysis {

struct Energy {
  double energy_mj = 0;
  enum class Method { kNone, kCounter, kPower } method = Method::kNone;
  int counter_updates = 0;  // counter edges inside the window
};

// Energy over [from, to) from a cumulative counter that changes only at update edges (~10 Hz on
// NVIDIA GPUs) or is read only now and then (it is expensive to read on some drivers). The
// counter is taken as exact at the first poll that saw each new value. Between two edges it is
// spread in proportion to `power_mw` (a finer power series, such as the driver's 50 Hz buffer),
// or linearly without one; outside the first and last edge the power integral (or the nearest
// segment's slope) extends it. Needs two edges; otherwise the method is kNone.
Energy energy_from_counter(const std::vector<Point>& counter, int64_t from_ns, int64_t to_ns,
                           const std::vector<Point>& power_mw = {});

// Energy as the integral of a power step function (mW x ns), for sources without a counter.
Energy energy_from_power(const std::vector<Point>& power_mw, int64_t from_ns, int64_t to_ns);

std::string to_string(Energy::Method m);

}  // namespace powershape::analysis
