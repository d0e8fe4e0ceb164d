#pragma once
#include <array>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "powershape/workload/plan.hpp"

namespace powershape::cli {

// The workload options `sim` and `repro` share.
struct WorkloadArgs {
  std::string workload = "lmhead";  // lmhead, msm, square or a PLAN.json
  std::string shape;                // N,D,V (lmhead) or ROWS,D,COLS (msm)
  int chunks = 1;
  bool forward_only = false;
  double ce_bytes_per_logit = 4;
  double period_ms = 50, duty = 0.5;
  std::string gap = "idle";
  std::string recorded_on;  // a kernel timeline's GPU (a profile); default the simulated one
};

void add_workload_options(CLI::App& cmd, WorkloadArgs& a);
// The plan the options describe; square waves are sized with the device's unthrottled rates.
// Throws with a one-line reason.
workload::Plan build_plan(const WorkloadArgs& a, double peak_flops_per_s, double peak_bytes_per_s);
// "4096,896,151936" -> three positive integers; throws naming the option.
std::array<int64_t, 3> parse_shape(const std::string& s);

}  // namespace powershape::cli
