#include "powershape/telemetry/counter_unwrap.hpp"

namespace powershape::telemetry {

CounterUnwrap::Step CounterUnwrap::feed(uint64_t raw) {
  bool went_back = false;
  if (!last_raw_) {
    // Keep the driver's own count where it fits; a counter that starts near its top counts from 0.
    total_ = raw < (uint64_t{1} << 62) ? raw : 0;
  } else if (raw >= *last_raw_) {
    total_ += raw - *last_raw_;
  } else if (constexpr uint64_t kTopHalf = uint64_t{1} << 63; *last_raw_ >= kTopHalf) {
    went_back = true;
    total_ += raw - *last_raw_;  // a wrap: modulo 2^64
  } else if (raw < *last_raw_ / 2) {
    went_back = true;
    total_ += raw;  // a reset: what was counted since it
  } else {
    return {static_cast<int64_t>(total_), false};  // a small step back: held at the high
  }
  last_raw_ = raw;
  return {static_cast<int64_t>(total_), went_back};
}

}  // namespace powershape::telemetry
