#pragma once
#include <array>
#include <cstdint>

#include "powershape/telemetry/signal.hpp"

namespace powershape::telemetry {

// One row of telemetry: what one GPU reported at one time. A poll fills most signals; a row
// harvested from the driver's power buffer carries kDriverPower alone.
struct Sample {
  int64_t t_ns = 0;  // steady clock
  int gpu = 0;       // position in the source's (and the trace's) device list
  std::array<Reading, kSignalCount> readings{};

  Reading& operator[](Signal s) { return readings[static_cast<std::size_t>(s)]; }
  const Reading& operator[](Signal s) const { return readings[static_cast<std::size_t>(s)]; }
  bool operator==(const Sample&) const = default;
};

}  // namespace powershape::telemetry
