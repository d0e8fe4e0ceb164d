#pragma once
// Owners of CUDA streams and events, and the time between two events. A failed CUDA call throws
// (cuda_check.hpp).
#include <cuda_runtime.h>

#include <vector>

#include "powershape/kernels/cuda_check.hpp"

namespace powershape::kernels {

// CUDA events made as they are first asked for, destroyed with the list.
class EventList {
 public:
  EventList() = default;
  ~EventList() {
    for (auto e : e_) cudaEventDestroy(e);
  }
  EventList(const EventList&) = delete;
  EventList& operator=(const EventList&) = delete;
  cudaEvent_t operator[](std::size_t i) {
    while (e_.size() <= i) {
      cudaEvent_t e;
      PS_CUDA(cudaEventCreate(&e));
      e_.push_back(e);
    }
    return e_[i];
  }

 private:
  std::vector<cudaEvent_t> e_;
};

inline double elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float t = 0;
  PS_CUDA(cudaEventElapsedTime(&t, a, b));
  return t;
}

// A stream that runs beside the default one (no implicit waits on it).
class Stream {
 public:
  Stream() { PS_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace powershape::kernels
