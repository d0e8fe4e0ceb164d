#pragma once
// The current device's multiprocessor count, read once per device: what grid-stride kernels size
// their grids by (several blocks a multiprocessor), rather than one GPU's count written in.
#include <cuda_runtime.h>

#include <array>
#include <atomic>

#include "powershape/kernels/cuda_check.hpp"

namespace powershape::kernels {

inline int multiprocessors() {
  static std::array<std::atomic<int>, 64> known{};  // 0: not read yet
  int dev = 0;
  PS_CUDA(cudaGetDevice(&dev));
  if (dev < 0 || dev >= static_cast<int>(known.size())) dev = 0;
  int n = known[static_cast<std::size_t>(dev)].load(std::memory_order_relaxed);
  if (n == 0) {
    PS_CUDA(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    known[static_cast<std::size_t>(dev)].store(n, std::memory_order_relaxed);
  }
  return n;
}

}  // namespace powershape::kernels
