#include "powershape/telemetry/counter_unwrap.hpp"

#include <algorithm>

namespace powershape::telemetry {

CounterUnwrap::Step CounterUnwrap::feed(uint64_t raw, int64_t t_ns) {
  bool went_back = false;
  uint64_t step = 0;
  if (!last_raw_) {
    // Keep the driver's own count where it fits; a counter that starts near its top counts from 0.
    total_ = raw < (uint64_t{1} << 62) ? raw : 0;
  } else if (raw >= *last_raw_) {
    step = raw - *last_raw_;
  } else if (constexpr uint64_t kTopHalf = uint64_t{1} << 63; *last_raw_ >= kTopHalf) {
    went_back = true;
    step = raw - *last_raw_;  // a wrap: modulo 2^64
  } else if (raw < *last_raw_ / 2) {
    went_back = true;
    step = raw;  // a reset: what was counted since it
  } else {
    return {static_cast<int64_t>(total_), false};  // a small step back: held at the high
  }
  Step out{0, went_back};
  if (last_raw_) {
    // In long double: seconds times a rate near INT64_MAX must not overflow.
    const long double dt_s =  // in long double: times near the ends of int64 must not overflow
        std::max(0.0L, static_cast<long double>(t_ns) - static_cast<long double>(last_t_ns_)) *
        1e-9L;
    const long double most = static_cast<long double>(most_per_s_) * (dt_s + 1.0L);
    if (static_cast<long double>(step) > most) {
      out.jumped = step;
      step = 0;
    }
  }
  total_ += step;
  last_raw_ = raw;
  last_t_ns_ = t_ns;
  out.value = static_cast<int64_t>(total_);
  return out;
}

}  // namespace powershape::telemetry
