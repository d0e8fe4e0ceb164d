// Products back to back on the GPU: A B C random, C = A B over and over.
#include "powershape/kernels/kind_on_gpu.hpp"
#include "powershape/workload/kinds/products/products.hpp"

namespace powershape::kernels {
namespace {

class ProductsOnGpu : public KindOnGpu {
 public:
  ProductsOnGpu(int64_t size, GpuContext& gpu) : gemm_(gpu.gemm) {
    a_ = gpu.memory.random_bf16(size * size, 1, 2.0f);
    b_ = gpu.memory.random_bf16(size * size, 2, 2.0f);
    c_ = gpu.memory.random_bf16(size * size, 3, 2.0f);
  }

  void launch(const workload::WorkloadStep& s, const std::function<void()>& done) override {
    gemm_.run(false, false, s.m, s.n, s.k, a_, s.m, b_, s.k, c_, s.m, Out::kBf16, 1, 0, nullptr);
    done();
  }

 private:
  Gemm& gemm_;
  __nv_bfloat16 *a_, *b_, *c_;
};

}  // namespace

std::unique_ptr<KindOnGpu> on_gpu(const workload::Products& p, int, GpuContext& gpu) {
  return std::make_unique<ProductsOnGpu>(p.size, gpu);
}

}  // namespace powershape::kernels
