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

// Energy as the integral of power readings (mW x ns), each taken as the mean power since the
// reading before it: the driver's buffer holds means over its ~20 ms periods, and NVML's power
// fields are means over their update period, stamped at its end. For short windows and sources
// without a counter.
Energy energy_from_power(const std::vector<Point>& power_mw, int64_t from_ns, int64_t to_ns);

// A counter reading holds the value of the counter's last update, up to one update period (or,
// read rarely, one read period) before the read: over a window that short the counter's rise is
// a whole update's energy, or none (`monitor -- sleep 0.03` read 300 W against a 120 W peak). So
// a window shorter than kCounterMinSpacings edge spacings of the counter (the median time between
// its changes as read) integrates `power_mw` instead, where there is such a series; longer windows
// take the counter (energy_from_counter).
inline constexpr int kCounterMinSpacings = 5;
Energy window_energy(const std::vector<Point>& counter, const std::vector<Point>& power_mw,
                     int64_t from_ns, int64_t to_ns);

std::string to_string(Energy::Method m);

}  // namespace powershape::analysis
