// A square wave on the GPU: its burst's products into A B C, its gap a spin or a stream.
#include "powershape/kernels/kind_on_gpu.hpp"
#include "powershape/kernels/synthetic.cuh"
#include "powershape/workload/kinds/square/square.hpp"

namespace powershape::kernels {
namespace {

constexpr int64_t kStreamBytes = int64_t{1} << 30;

class SquareOnGpu : public KindOnGpu {
 public:
  SquareOnGpu(const workload::Square& sq, GpuContext& gpu) : gemm_(gpu.gemm) {
    const int64_t n = workload::SquareSizing::kBurstSize;
    a_ = gpu.memory.random_bf16(n * n, 1, 2.0f);
    b_ = gpu.memory.random_bf16(n * n, 2, 2.0f);
    c_ = gpu.memory.random_bf16(n * n, 3, 2.0f);
    if (sq.gap == workload::Gap::kMemory) stream_ = gpu.memory.add(kStreamBytes);
  }

  void launch(const workload::WorkloadStep& s, const std::function<void()>& done) override {
    switch (s.code) {
      case workload::Square::kBurst:
        gemm_.run(false, false, s.m, s.n, s.k, a_, s.m, b_, s.k, c_, s.m, Out::kBf16, 1, 0,
                  nullptr);
        break;
      case workload::Square::kStream:
        stream_bytes(stream_, kStreamBytes, s.bytes, nullptr);
        break;
      case workload::Square::kSpin:
        spin(static_cast<int64_t>(s.seconds * 1e9), nullptr);
        return;  // an idle gap, not a kernel to time
    }
    done();
  }

 private:
  Gemm& gemm_;
  __nv_bfloat16 *a_, *b_, *c_;
  void* stream_ = nullptr;
};

}  // namespace

std::unique_ptr<KindOnGpu> on_gpu(const workload::Square& s, int, GpuContext& gpu) {
  return std::make_unique<SquareOnGpu>(s, gpu);
}

}  // namespace powershape::kernels
