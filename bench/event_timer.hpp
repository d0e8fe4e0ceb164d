#pragma once
// The GPU time of one call, from a pair of CUDA events recorded around it on the default stream.
// Shared by the benchmark programs; a failed CUDA call throws (kernels/cuda_check.hpp).
#include <cuda_runtime.h>

#include "powershape/kernels/cuda_check.hpp"

class EventTimer {
 public:
  EventTimer() {
    PS_CUDA(cudaEventCreate(&a_));
    PS_CUDA(cudaEventCreate(&b_));
  }
  ~EventTimer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Milliseconds from before `body`'s work to after it, waiting for it to finish.
  template <class Body>
  double ms(Body&& body) {
    PS_CUDA(cudaEventRecord(a_));
    body();
    PS_CUDA(cudaEventRecord(b_));
    PS_CUDA(cudaEventSynchronize(b_));
    float m = 0;
    PS_CUDA(cudaEventElapsedTime(&m, a_, b_));
    return m;
  }

 private:
  cudaEvent_t a_{}, b_{};
};
