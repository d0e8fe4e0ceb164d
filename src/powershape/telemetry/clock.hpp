#pragma once
#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>

namespace powershape::telemetry {

inline int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CPU time the calling thread has used, in ns (a thread that waits or sleeps uses none).
inline int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// The wall clock (UTC, ns since 1970) minus the steady clock, now: what puts steady times on UTC
// (the driver's power buffer is dated on the wall clock; traces carry it as their anchor).
inline int64_t wall_minus_steady_ns() {
  const int64_t wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  return wall - steady_now_ns();
}

// A wall-clock time (ns since 1970) as ISO 8601 UTC to the second: "2026-12-01T13:07:02Z".
inline std::string utc_iso(int64_t wall_ns) {
  const auto secs = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  char utc[32] = "";
  std::tm tm{};
  if (gmtime_r(&secs, &tm) != nullptr) std::strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return utc;
}

}  // namespace powershape::telemetry
