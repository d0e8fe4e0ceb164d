#pragma once
#include <chrono>
#include <cstdint>

namespace powershape::telemetry {

inline int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The wall clock (UTC, ns since 1970) minus the steady clock, now: what puts steady times on UTC
// (the driver's power buffer is dated on the wall clock; traces carry it as their anchor).
inline int64_t wall_minus_steady_ns() {
  const int64_t wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  return wall - steady_now_ns();
}

}  // namespace powershape::telemetry
