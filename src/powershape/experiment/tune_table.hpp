#pragma once
// What `tune` prints of its race: each candidate's rounds, time, energy and objective (or why it
// was dropped), the choice against the baseline on fresh paired rounds, and what the search cost
// against an exhaustive sweep.
#include <cstdio>

#include "powershape/experiment/tune.hpp"

namespace powershape::experiment {

void print_tune_result(std::FILE* out, const TuneResult& r);

}  // namespace powershape::experiment
