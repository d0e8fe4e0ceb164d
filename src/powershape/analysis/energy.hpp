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
// NVIDIA GPUs). The counter is taken as exact at the first poll that saw each new value and as
// linear in between; outside the first and last edge the nearest segment's slope extends it.
// Needs two edges; otherwise the method is kNone.
Energy energy_from_counter(const std::vector<Point>& counter, int64_t from_ns, int64_t to_ns);

// Energy as the integral of a power step function (mW x ns), for sources without a counter.
Energy energy_from_power(const std::vector<Point>& power_mw, int64_t from_ns, int64_t to_ns);

std::string to_string(Energy::Method m);

}  // namespace powershape::analysis
