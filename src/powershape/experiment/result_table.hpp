#pragma once
#include <cstdio>

#include "powershape/experiment/engine.hpp"

namespace powershape::experiment {

// The engine's result as a table: one row per configuration, medians and ratios to the baseline
// with their 95% intervals, and the verdicts; then the best configuration.
void print_result(std::FILE* out, const experiment::Result& r);

}  // namespace powershape::experiment
