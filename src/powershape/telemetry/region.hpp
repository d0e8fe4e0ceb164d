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

// A name a region may have: 1 to 200 bytes of valid UTF-8 without control characters (it travels
// as one line through the monitor's FIFO, atomically, and into JSON). Empty when it may; else why
// not, in a few words.
std::string region_name_problem(const std::string& name);

}  // namespace powershape::telemetry
