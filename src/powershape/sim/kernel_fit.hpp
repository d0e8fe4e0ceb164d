#pragma once
// Fits the profile's kernel model (kernels.* : launch cost, product overlap, each memory kernel's
// share of the bandwidth) to per-kernel times recorded by `probe --record` (kernels.csv).
#include <vector>

#include "powershape/sim/calibrate.hpp"
#include "powershape/workload/kernel_time.hpp"

namespace powershape::sim {

// The simulator's milliseconds for one recorded kernel at the clock it was recorded at.
double kernel_ms(const Profile& p, const workload::KernelTime& k);

struct KernelFit {
  std::vector<Target> before, after;  // per configuration: its kernels' milliseconds summed
};

// Fits p.kernel_launch_us, p.memory_efficiency and p.epilogue_k. Throws
// std::runtime_error when there are no kernels to fit.
KernelFit fit_kernels(Profile& p, const std::vector<workload::KernelTime>& ks);

}  // namespace powershape::sim
