#pragma once
// swing's one call: recordings read and lined up on time, scaled to a fleet moving in step,
// analysed against a grid spec and folded over a region (a step); then its printer and JSON.
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "powershape/analysis/fold.hpp"
#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/swing.hpp"

namespace powershape::analysis {

struct SwingRequest {
  std::vector<std::string> recordings;
  std::string spec = kDefaultGridSpec;
  std::string region;  // only from its first to its last region in each trace; folded over
  int64_t gpus = 0;    // > 0: the fleet the recordings' GPUs stand for
  // 0: the recordings' own step, the spec's windows, the recordings' rated power; fold_ms 0: none.
  double resolution_s = 0, ramp_window_s = 0, range_window_s = 0, rated_w = 0, fold_ms = 0;
  double segment_s = 20;
};

struct SwingRun {
  SwingRequest request;
  GridSpec spec;
  PowerInput in;
  SwingOptions options;
  Swing swing;
  std::optional<Fold> fold;
  int64_t fleet = 0;  // the GPUs it stands for; 0: a meter's, unknown
};

// Throws invalid_input naming what is wrong: a fold without a region, a fleet scale of a meter's
// CSV (which does not say how many GPUs it holds), and what reading and analysing refuse.
SwingRun swing_run(const SwingRequest& q);
// The inputs, the figures and verdicts, the fold; where no rated power was known, `rated_hint`
// (how to give one) in a line.
void print_swing_run(std::FILE* out, const SwingRun& r, const std::string& rated_hint);
nlohmann::json to_json(const SwingRun& r);

}  // namespace powershape::analysis
