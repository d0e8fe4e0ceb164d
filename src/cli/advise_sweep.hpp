#pragma once
// advise --sweep -- CMD: each candidate setting applied in turn (recorded, set, put back), the
// command measured under it in interleaved rounds, and the best within the bound chosen from
// what was measured. Changes the GPU's settings: never run on a shared GPU.
#include <string>
#include <vector>

#include "powershape/advise/setting.hpp"

namespace powershape::cli {

struct SweepArgs {
  std::vector<std::string> command;
  std::string source = "nvml";  // where the command's telemetry comes from
  int gpu = 0, rounds = 2, points = 4;
  std::vector<advise::Knob> knobs;
  experiment::Objective objective;
  double max_slowdown = -1;
  std::string out;
};

int sweep_settings(const SweepArgs& a);

}  // namespace powershape::cli
