#pragma once
// The table `sim calibrate` prints: each fitted figure, measured, before and after the fit, with
// its error; the chunk ratios' agreement; the figures shown and not fitted (other square waves,
// kernels timed alone); and the fitted profile's parameters.
#include <cstdio>

#include "powershape/sim/calibrate.hpp"

namespace powershape::sim {

void print_calibration(std::FILE* out, const Calibration& c);

}  // namespace powershape::sim
