#pragma once
// The one description of what a workload runs: its steps, the kernels the GPU launches in order,
// each with what it asks of the GPU as a plan's phase (flops, bytes, seconds). The GPU runs the
// steps (kernels/gpu_workload.cu through each kind's .cu file); the simulator's plan is derived
// from them (builders.hpp: their phases in order); probe --record labels each kernel it times with
// its phase (kernel_of). No CUDA headers.
#include <string>
#include <vector>

#include "powershape/workload/kernel_time.hpp"
#include "powershape/workload/workload.hpp"

namespace powershape::workload {

// Each step of one iteration of `w`, in order; a square wave is sized with the device's rates.
// Custom workloads have no steps (throws).
void workload_steps(const Workload& w, const Rates& rates, const StepFn& f);

// A phase as probe --record labels the kernel it times: its name, m x n x k, bytes.
KernelTime kernel_of(const Phase& p);

// The names of every memory kernel a built-in workload runs (each kind's examples' steps, and a
// fine-tune's plan): the kernels a device profile may give a memory efficiency (sim/profile.hpp
// refuses any other name).
const std::vector<std::string>& memory_kernel_names();

}  // namespace powershape::workload
