#pragma once
// Runs a workload's real kernels on the GPU (its steps, workload/steps.hpp): the chunked LM head
// op or its three products alone, chunked matmul-softmax-matmul, square waves of products
// against idle or memory-bound gaps, or products back to back. Host API: no CUDA headers.
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "powershape/workload/builders.hpp"
#include "powershape/workload/kernel_time.hpp"

namespace powershape::kernels {

class GpuWorkload {
 public:
  // Allocates and fills (random bf16) what the workload needs, and runs one iteration, waited for:
  // the first run of each product shape in the process times cuBLASLt's candidates for it (Gemm),
  // which a measurement that starts after construction then does not count. Square waves are
  // sized with the GPU's unthrottled `rates`. Throws std::invalid_argument for a custom plan (only
  // the simulator runs those) or a shape the kernels cannot take, std::runtime_error when it does
  // not fit the GPU.
  GpuWorkload(const workload::Workload& w, const workload::Rates& rates);
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
  // Each kernel of one iteration, timed with CUDA events around it (median of `iterations`),
  // labelled as its plan's phases (workload::kernel_of); a square wave's idle spin is left out.
  std::vector<workload::KernelTime> time_kernels(int iterations);
  // Device memory the workload takes beyond its inputs and outputs (the LM head's workspace and
  // product plans), measured around its first iteration.
  std::size_t extra_bytes() const;
  // What it computed: its inputs and outputs by name, on the host (each kind's own; none for
  // some), for the GPU tests' checks against reference/.
  std::map<std::string, std::vector<float>> tensors() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The GPU's unthrottled dense bf16 product rate and copy bandwidth, each from a short burst on a
// cool GPU.
workload::Rates measure_peak_rates();

}  // namespace powershape::kernels
