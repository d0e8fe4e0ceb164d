#pragma once
// What `optimize` prints of its result: the job as found and its throttling, the energy by phase;
// the chunk counts raced, the settings predicted and the grid spec's verdicts; the recommendation,
// its ratios to the job as found and what it saves.
#include <cstdio>
#include <string>

#include "powershape/optimize/optimize.hpp"

namespace powershape::optimize {

// tokens_per_step > 0: the job's tokens/s as found. applied: the settings were set, not only
// predicted. measure_with: how a predicted recommendation is measured ("--apply measures it").
void print_result(std::FILE* out, const Result& r, double tokens_per_step, bool applied,
                  const std::string& measure_with);

}  // namespace powershape::optimize
