#pragma once
// The figures of a swing analysis and its verdicts, as `swing` and `sim fleet` print them.
#include "powershape/analysis/swing.hpp"

namespace powershape::cli {

// Power, period, ramps, range, the spectrum by band, then a line a limit and the verdict.
void print_swing(const analysis::Swing& s, const analysis::GridSpec& spec);

}  // namespace powershape::cli
