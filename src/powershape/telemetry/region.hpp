#pragma once
#include <cstdint>
#include <string>

namespace powershape::telemetry {

// A named span of time, placed by code or the CLI, over which energy and throttling are
// attributed. gpu -1 covers every GPU.
struct Region {
  std::string name;
  int gpu = -1;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  bool operator==(const Region&) const = default;
};

}  // namespace powershape::telemetry
