#pragma once
// One workload kind's buffers and kernels on the GPU: each kind's .cu file (workload/kinds/) makes
// one with on_gpu (workload/kind.hpp); GpuWorkload runs and times what it launches.
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "powershape/kernels/gemm.hpp"
#include "powershape/workload/kind.hpp"

namespace powershape::kernels {

// cudaMalloc'd bytes, freed with it; throws a device Error where they do not fit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int64_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;
  void* get() const { return p_; }
  __nv_bfloat16* bf16() const { return static_cast<__nv_bfloat16*>(p_); }

 private:
  void* p_ = nullptr;
};

// The buffers a workload holds for its life.
class DeviceMemory {
 public:
  void* add(int64_t bytes);
  __nv_bfloat16* bf16(int64_t elements) { return static_cast<__nv_bfloat16*>(add(2 * elements)); }
  // `elements` bf16 values, uniform in (-scale, scale), the same for the same seed.
  __nv_bfloat16* random_bf16(int64_t elements, uint64_t seed, float scale);

 private:
  std::vector<DeviceBuffer> buffers_;
};

struct GpuContext {
  Gemm& gemm;
  DeviceMemory& memory;
};

class KindOnGpu {
 public:
  virtual ~KindOnGpu() = default;
  // Enqueues step s's kernels on the default stream, calling done() as each of them (each of
  // s.phases, in order) is enqueued; an idle spin is no kernel and calls nothing.
  virtual void launch(const workload::WorkloadStep& s, const std::function<void()>& done) = 0;
  // Device memory taken beyond the inputs and outputs (the LM head op's workspace and plans).
  virtual std::size_t extra_bytes() const { return 0; }
  // Its inputs and outputs by name, copied to the host (the GPU tests check what a kind computed
  // against reference/); none where a kind offers none.
  virtual std::map<std::string, std::vector<float>> tensors() const { return {}; }
};

// `n` bf16 values on the GPU as floats on the host (waits for the device).
std::vector<float> to_host(const __nv_bfloat16* p, int64_t n);

}  // namespace powershape::kernels
