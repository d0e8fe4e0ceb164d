#include "powershape/telemetry/counter_unwrap.hpp"

namespace powershape::telemetry {

CounterUnwrap::Step CounterUnwrap::feed(uint64_t raw) {
  bool went_back = false;
  if (!last_raw_) {
    // Keep the driver's own count where it fits; a counter that starts near its top counts from 0.
    total_ = raw < (uint64_t{1} << 62) ? raw : 0;
  } else if (raw >= *last_raw_) {
    total_ += raw - *last_raw_;
  } else {
    went_back = true;
    constexpr uint64_t kTopHalf = uint64_t{1} << 63;
    total_ += (*last_raw_ >= kTopHalf) ? raw - *last_raw_ /* modulo 2^64 */ : raw;
  }
  last_raw_ = raw;
  return {static_cast<int64_t>(total_), went_back};
}

}  // namespace powershape::telemetry
