#pragma once
#include <chrono>
#include <cstdint>

namespace powershape::telemetry {

inline int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace powershape::telemetry
