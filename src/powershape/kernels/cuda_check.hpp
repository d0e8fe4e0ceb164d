#pragma once
// Error checks for CUDA and cuBLASLt calls: a failed call throws std::runtime_error naming the
// call, the file and line, and the library's reason.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "powershape/util/error.hpp"

namespace powershape::kernels {

// No GPU, or a driver older than the runtime: what the machine lacks, not a failure of its GPU.
inline void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e == cudaSuccess) return;
  const std::string why = std::string(what) + " failed at " + file + ":" + std::to_string(line) +
                          ": " + cudaGetErrorString(e);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) throw unsupported(why);
  throw device_error(why);
}

inline void check_cublas(cublasStatus_t s, const char* what, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw device_error(std::string(what) + " failed at " + file + ":" + std::to_string(line) +
                       ": cuBLAS status " + std::to_string(static_cast<int>(s)));
  }
}

}  // namespace powershape::kernels

#define PS_CUDA(x) ::powershape::kernels::check_cuda((x), #x, __FILE__, __LINE__)
#define PS_CUBLAS(x) ::powershape::kernels::check_cublas((x), #x, __FILE__, __LINE__)
#define PS_LAUNCHED() \
  ::powershape::kernels::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
