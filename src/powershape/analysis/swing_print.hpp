#pragma once
// The figures of a swing analysis and its verdicts, as `swing` and `sim fleet` print them.
#include <cstdint>
#include <cstdio>
#include <string>

#include "powershape/analysis/fold.hpp"
#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/swing.hpp"

namespace powershape::analysis {

// What was read: the recordings, their signal and GPUs, the span and step; how they were lined
// up and scaled to a fleet of `fleet` GPUs.
void print_swing_inputs(std::FILE* out, const PowerInput& in, const Swing& s, std::size_t files,
                        int64_t fleet);
// Power, period, ramps, range, the spectrum by band, then a line a limit and the verdict.
void print_swing(std::FILE* out, const analysis::Swing& s, const analysis::GridSpec& spec);
// The power through a region (`swing --fold`): a line a bin, min, p10, median, p90, max.
void print_fold(std::FILE* out, const analysis::Fold& f, const std::string& region, double dt_s);

}  // namespace powershape::analysis
