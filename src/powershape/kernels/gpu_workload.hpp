#pragma once
// Runs a workload plan's real kernels on the GPU: the chunked LM head op, chunked
// matmul-softmax-matmul, square waves of products against idle or memory-bound gaps, or products
// back to back. Host API: no CUDA headers.
#include <memory>
#include <utility>

#include "powershape/workload/plan.hpp"

namespace powershape::kernels {

class GpuWorkload {
 public:
  // Allocates and fills (random bf16) what the plan's spec needs. Throws std::invalid_argument
  // for a plan read from a file (kCustom), std::runtime_error when it does not fit the GPU.
  GpuWorkload(const workload::Plan& plan, double peak_flops_per_s, double peak_bytes_per_s);
  ~GpuWorkload();
  GpuWorkload(const GpuWorkload&) = delete;
  GpuWorkload& operator=(const GpuWorkload&) = delete;

  struct Run {
    int iterations = 0;
    double ms_per_iteration = 0;  // median, CUDA events
    double compute_ms = 0;        // time in compute (the bursts of a square wave; else everything)
    double compute_flops = 0;
  };
  // Runs iterations back to back until `seconds` have passed.
  Run run_for(double seconds);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The GPU's unthrottled dense bf16 product rate (FLOP/s) and copy bandwidth (bytes read +
// written per second), each from a short burst on a cool GPU.
std::pair<double, double> measure_peak_rates();

}  // namespace powershape::kernels
