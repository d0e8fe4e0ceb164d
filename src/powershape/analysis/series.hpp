#pragma once
#include <cstdint>
#include <vector>

#include "powershape/trace/trace.hpp"

namespace powershape::analysis {

struct Point {
  int64_t t_ns;
  int64_t value;
};

// The valid readings of one signal of one GPU, sorted by time.
std::vector<Point> series(const trace::Trace& t, int gpu, telemetry::Signal s);

// The finest power series a GPU has: the driver's buffer, else the instantaneous field, else the
// 1 s average; empty without any.
std::vector<Point> fine_power(const trace::Trace& t, int gpu);

// A signal read as a step function (each reading holds until the next) over [from, to): the time
// each value was held. The reading last before `from` covers the start of the window.
struct Held {
  int64_t value;
  int64_t duration_ns;
};
std::vector<Held> held(const std::vector<Point>& pts, int64_t from_ns, int64_t to_ns);

// Time-weighted statistics of a step function.
struct Distribution {
  double mean = 0;
  double p5 = 0, p50 = 0, p95 = 0;
  int64_t min = 0, max = 0;
  int64_t covered_ns = 0;  // time with a value; 0 means no data
};
Distribution distribution(std::vector<Held> held);

}  // namespace powershape::analysis
