#pragma once
// A grid spec: the limits a utility sets on a site's power, in the terms of swing.hpp, each with
// its source (specs/*.json, docs/grid.md). A limit is absolute (W, W/s) or a share of the rated
// power (the GPUs' power limits added up), so one spec serves a node and a 100,000-GPU fleet.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace powershape::analysis {

struct GridLimit {
  double value = 0;
  bool of_rated = false;  // value is a share of the rated power (per second, for a ramp)
  std::string source;
};

struct GridBand {
  double lo_hz = 0, hi_hz = 0;
  double max_share = 1;  // of the variation's energy
  std::string source;
};

struct GridSpec {
  std::string name, source;
  double ramp_window_s = 1;  // ramps are the change of the mean over one window to the next
  std::optional<GridLimit> ramp_up, ramp_down;
  double range_window_s = 10;  // the dynamic range: max - min inside any window this long
  std::optional<GridLimit> range;
  std::vector<GridBand> bands;
};

// Throws (invalid input) naming the field that is missing, unknown or out of range.
GridSpec grid_spec_from_json(const nlohmann::json& j);
// A spec by path, or by name from the share folder's specs/ ("grid-example").
GridSpec load_grid_spec(const std::string& name_or_path);
inline constexpr const char* kDefaultGridSpec = "grid-example";

}  // namespace powershape::analysis
