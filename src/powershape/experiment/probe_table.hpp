#pragma once
// What `probe` prints: a row a square wave as it is measured, then the sustained row, boost
// against sustained, the controller's response to a load step and the power window.
#include <cstdio>
#include <string>

#include "powershape/experiment/probe_curve.hpp"

namespace powershape::experiment {

void print_probe_heading(std::FILE* out);
void print_probe_point(std::FILE* out, const ProbePoint& pt);
// The rows and lines after the square waves; `gap` the kind of gap the power window was found
// between.
void print_probe_curve(std::FILE* out, const ProbeCurve& c, const std::string& gap);

}  // namespace powershape::experiment
