#pragma once
// What `sim` prints of its runs and fits.
#include <cstdio>
#include <string>

#include "powershape/sim/calibrate.hpp"
#include "powershape/sim/simulator.hpp"

namespace powershape::sim {

// A run's line under its summaries: iterations, time and energy each, TFLOP/s, the real clock and
// the model die's temperature at the end.
void print_run(std::FILE* out, const workload::Plan& plan, const SimResult& r);
// `sim calibrate`: each fitted figure, measured, before and after the fit, with its error; the
// chunk ratios' agreement; the figures shown and not fitted (other square waves, kernels timed
// alone); and the fitted profile's parameters. recorded_by: what records a load's start
// ("probe --record"), where the step response needs it.
void print_calibration(std::FILE* out, const Calibration& c, const std::string& recorded_by);

}  // namespace powershape::sim
