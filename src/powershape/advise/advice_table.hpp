#pragma once
// What advise prints of its predictions (advice.hpp, mfu_power.hpp), beside the outcomes' table.
#include <cstdio>
#include <string>
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
// From a trace (`label`, its GPU `gpu`): the device and curve, the choice, the grid spec's line,
// the selector's pick, the classes, and the heading of the outcomes' table.
void print_trace_advice(std::FILE* out, const TraceAdvice& r, const std::string& label, int gpu,
                        double max_slowdown);
// On a simulated device `p` running `workload`: what was simulated, the choice, the selector's
// pick.
void print_sim_advice(std::FILE* out, const SimAdvice& r, const std::string& workload,
                      const sim::Profile& p, double max_slowdown);
// The model fitted from the recordings in `from` against a peak (`peak_from` says whose); then
// each condition's MFU, power and the model's power, and why one was left out of the fit.
void print_mfu_fit(std::FILE* out, const std::string& from, double peak_flops_per_s,
                   const std::string& peak_from, const std::vector<MfuPoint>& points,
                   const MfuModel& m, double power_limit_w);

}  // namespace powershape::advise
