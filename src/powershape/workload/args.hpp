#pragma once
// A workload as the command line describes it (`sim`, `repro`, `probe` share these options;
// cli/workload_options.cpp declares them), and the plans it makes.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/workload/builders.hpp"

namespace powershape::workload {

struct WorkloadArgs {
  std::string workload = "lmhead";  // lmhead, msm, square, a PLAN.json or a kernel TIMELINE.csv
  std::string shape;                // N,D,V (lmhead) or ROWS,D,COLS (msm); empty: the default
  std::string chunks = "1";         // a chunk count, or a list of them to compare
  bool forward_only = false;
  bool products_only = false;   // lmhead: the products alone, chunked, without the pass
  bool exp_in_product = false;  // lmhead: the exponent in the logits product (the op on sm_90)
  double ce_bytes_per_logit = 4;
  double period_ms = 50, duty = 0.5;
  std::string gap = "idle";
  std::string recorded_on;  // a kernel timeline's GPU (a profile); default the device it runs on
  Rates recorded_on_rates;  // that profile's unthrottled rates, which the caller looks up
};

// "4096,896,151936" -> three positive integers; an Error whose subject is "shape" otherwise.
std::array<int64_t, 3> parse_shape(const std::string& s);
// The chunk counts `chunks` lists, each at least 1 (an Error whose subject is "chunks" otherwise).
std::vector<int> chunk_counts(const WorkloadArgs& a);
// The workload the options describe, with `chunks` row chunks (Custom for a file).
Workload describe(const WorkloadArgs& a, int chunks);
// The plan the options describe at `chunks`; square waves and kernel timelines are sized with the
// device's unthrottled rates. Throws std::runtime_error with a one-line reason.
Plan build_plan(const WorkloadArgs& a, int chunks, const Rates& device);
// One plan per chunk count --chunks lists.
std::vector<Plan> build_plans(const WorkloadArgs& a, const Rates& device);

}  // namespace powershape::workload
