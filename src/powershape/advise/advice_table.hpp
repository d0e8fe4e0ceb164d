#pragma once
// What advise prints of its predictions (advice.hpp, mfu_power.hpp), beside the outcomes' table.
#include <cstdio>
#include <vector>

#include "powershape/advise/advice.hpp"
#include "powershape/advise/mfu_power.hpp"

namespace powershape::advise {

// The recommendation against the GPU as found, or that none improves the objective.
void print_choice(std::FILE* out, const std::vector<Outcome>& o, std::size_t chosen,
                  const experiment::Objective& obj, double max_slowdown);
// The learned selector's pick is shown beside the search's only where it keeps the slowdown bound
// (its predicted time; no bound: always).
void print_selector_pick(std::FILE* out, const Outcome& o, double max_slowdown);
// The trace's classes: each one's windows, time and energy shares, clocks and fitted P(f); then
// where the clock-bound share of a step's time came from.
void print_classes(std::FILE* out, const TraceAdvice& a);
// Each condition's MFU, power and the model's power; why one was left out of the fit.
void print_mfu_fit(std::FILE* out, const std::vector<MfuPoint>& points, const MfuModel& m,
                   double power_limit_w);

}  // namespace powershape::advise
