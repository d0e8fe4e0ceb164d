#pragma once
// `smooth`'s one call: a job run on a GPU under a power floor held by filler work
// (shape/smooth.hpp, the filler from the GPU plugin), then the recording's swing against a grid
// spec; its printer.
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/swing.hpp"
#include "powershape/shape/smooth.hpp"

namespace powershape::experiment {

struct SmoothRequest {
  std::vector<std::string> command;
  std::string floor;  // W, or N% of the GPU's power limit (shape::parse_floor)
  std::string gap;    // the region the job marks its gaps with; empty: gaps found in the power
  std::string csv;    // the recording, written as it goes; empty: none
  double ramp_w_per_s = 0, back_off_w = 0, interval_ms = 10;
  bool pace = false;
  int gpu = 0;
  std::string spec = analysis::kDefaultGridSpec;
};

struct SmoothedJob {
  shape::SmoothRun run;
  shape::FloorOptions floor;
  bool pace = false;
  analysis::GridSpec spec;
  std::optional<analysis::Swing> swing;  // none: too short a recording, and why in swing_error
  std::string swing_error;
};

// The spec and the floor are read before the GPU is opened. `say`: the session's warnings (empty:
// none said).
SmoothedJob smooth(const SmoothRequest& q, const std::function<void(const std::string&)>& say);
// What was held and filled, then the swing's figures and verdicts (or why there are none).
void print_smoothed_job(std::FILE* out, const SmoothedJob& s);

}  // namespace powershape::experiment
