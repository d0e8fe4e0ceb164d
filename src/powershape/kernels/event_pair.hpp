#pragma once
// A pair of CUDA events on the default stream, for GPU time: start() and stop() record them around
// some work, ms() reads the time between them once stop's point has been reached; time(body) does
// all three around one call and waits for it. A failed CUDA call throws (cuda_check.hpp).
#include <cuda_runtime.h>

#include "powershape/kernels/cuda_check.hpp"

namespace powershape::kernels {

class EventPair {
 public:
  EventPair() {
    PS_CUDA(cudaEventCreate(&a_));
    PS_CUDA(cudaEventCreate(&b_));
  }
  ~EventPair() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;

  void start() { PS_CUDA(cudaEventRecord(a_)); }
  void stop() { PS_CUDA(cudaEventRecord(b_)); }
  double ms() const {
    float m = 0;
    PS_CUDA(cudaEventElapsedTime(&m, a_, b_));
    return m;
  }

  template <class Body>
  double time(Body&& body) {
    start();
    body();
    stop();
    PS_CUDA(cudaEventSynchronize(b_));
    return ms();
  }

 private:
  cudaEvent_t a_{}, b_{};
};

}  // namespace powershape::kernels
