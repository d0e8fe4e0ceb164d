#pragma once
// A grid spec: the limits a utility sets on a site's power, in the terms of swing.hpp, each with
// its source (specs/*.json, docs/grid.md). A limit is absolute (W, W/s) or a share of the rated
// power (the GPUs' power limits added up), so one spec serves a node and a 100,000-GPU fleet.
#include <cstddef>
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

// A band's limit is on the share of the variation's energy inside it (max_share), or on the
// magnitude of the oscillation inside it (max_rms: the band's RMS in W, absolute or a share of the
// rated power; a sine of amplitude A has an RMS of A/sqrt(2)), or both. A share says where the
// variation sits, whatever its size: a flat job's last watt of noise is spread over every band,
// so a share limit on a band that covers most of the spectrum fails even a flat job. A magnitude
// limit says how large the oscillation is, as utilities state it in MW.
struct GridBand {
  double lo_hz = 0, hi_hz = 0;
  std::optional<double> max_share;  // of the variation's energy
  std::optional<GridLimit> max_rms;
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

// At most kMaxBands bands, and a file of at most kMaxSpecBytes.
inline constexpr std::size_t kMaxBands = 64, kMaxSpecBytes = 1 << 20;

// Throws (invalid input) naming the field that is missing, unknown or out of range.
GridSpec grid_spec_from_json(const nlohmann::json& j);
// A spec by path, or by name from the share folder's specs/ ("grid-example").
GridSpec load_grid_spec(const std::string& name_or_path);
inline constexpr const char* kDefaultGridSpec = "grid-example";

}  // namespace powershape::analysis
