// The LM head on the GPU: the op itself (its kernels timed one by one as it walks its steps), or
// its three products alone through cuBLASLt, chunked as the op chunks them.
#include <cuda_runtime.h>

#include <vector>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/kind_on_gpu.hpp"
#include "powershape/kernels/lmhead.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/kinds/lmhead/lmhead.hpp"

namespace powershape::kernels {
namespace {

class LmHeadOnGpu : public KindOnGpu {
 public:
  LmHeadOnGpu(const workload::LmHead& l, int chunks, GpuContext& gpu) {
    const int64_t n = l.tokens, d = l.width, v = l.vocab;
    options_ = workload::lmhead_options(l, chunks);
    if (l.exp_in_product && !LmHead::exp_in_product(options_))
      throw invalid_input("lmhead: this GPU cannot take the exponent in the product (sm_90 only)");
    args_.x = gpu.memory.random_bf16(n * d, 1, 2.0f);
    args_.w = gpu.memory.random_bf16(v * d, 2, 0.1f);
    void* targets = gpu.memory.add(n * 4);
    std::vector<int32_t> th(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      th[static_cast<std::size_t>(i)] = static_cast<int32_t>((i * 7919) % v);
    PS_CUDA(cudaMemcpy(targets, th.data(), th.size() * 4, cudaMemcpyHostToDevice));
    args_.targets = targets;
    args_.n = n;
    args_.d = d;
    args_.v = v;
    args_.loss = static_cast<float*>(gpu.memory.add(64));
    args_.dx = gpu.memory.add(n * d * 2);
    args_.dw = gpu.memory.add(v * d * 4);
    if (l.bias) {
      args_.bias = gpu.memory.random_bf16(v, 4, 0.1f);
      args_.dbias = static_cast<float*>(gpu.memory.add(v * 4));
    }
    std::size_t free0 = 0, free1 = 0, total = 0;
    PS_CUDA(cudaDeviceSynchronize());
    PS_CUDA(cudaMemGetInfo(&free0, &total));
    args_.workspace_bytes = LmHead::workspace_bytes(n, d, v, options_);
    args_.workspace = gpu.memory.add(static_cast<int64_t>(args_.workspace_bytes));
    op_.run(args_, options_, nullptr);  // the product plans and their workspace
    PS_CUDA(cudaDeviceSynchronize());
    PS_CUDA(cudaMemGetInfo(&free1, &total));
    extra_ = free0 - free1;
  }

  void launch(const workload::WorkloadStep&, const std::function<void()>& done) override {
    op_.run(args_, options_, nullptr, [&](const workload::LmHeadStep&) { done(); });
  }

  std::size_t extra_bytes() const override { return extra_; }

 private:
  LmHead op_;
  LmHeadArgs args_;
  LmHeadOptions options_;
  std::size_t extra_ = 0;
};

class ProductsOnGpu : public KindOnGpu {
 public:
  ProductsOnGpu(const workload::LmHeadProducts& p, GpuContext& gpu)
      : gemm_(gpu.gemm), ld_(workload::lmhead_row_stride(p.vocab)) {
    x_ = gpu.memory.random_bf16(p.tokens * p.width, 1, 2.0f);
    w_ = gpu.memory.random_bf16(p.vocab * p.width, 2, 0.1f);
    logits_ = gpu.memory.random_bf16(p.tokens * ld_, 3, 0.01f);  // which stand for the dlogits too
    dx_ = gpu.memory.bf16(p.tokens * p.width);
    dw_ = gpu.memory.add(p.vocab * p.width * 4);
  }

  void launch(const workload::WorkloadStep& s, const std::function<void()>& done) override {
    using P = workload::LmHeadProducts;
    switch (s.code) {
      case P::kLogits:
        // logits_c [r x V] = X_c W^T: (V x r) = W^T-as-stored * X_c^T.
        gemm_.run(true, false, s.n, s.m, s.k, w_, s.k, x_ + s.row0 * s.k, s.k,
                  logits_ + s.row0 * ld_, ld_, Out::kBf16, 1, 0, nullptr);
        break;
      case P::kDw:
        // dW [V x D] (+)= dlogits_c^T X_c: (D x V) = X_c^T (D x r) * dlogits_c (r x V), in the
        // step's dtype, accumulated where it says (from the second chunk on, as the op does).
        gemm_.run(false, true, s.n, s.m, s.k, x_ + s.row0 * s.n, s.n, logits_ + s.row0 * ld_, ld_,
                  dw_, s.n, s.fp32_result ? Out::kFp32 : Out::kBf16, 1, s.accumulate ? 1 : 0,
                  nullptr);
        break;
      case P::kDx:
        // dX_c [r x D] = dlogits_c W: (D x r) = W^T (D x V) * dlogits_c^T (V x r).
        gemm_.run(false, false, s.n, s.m, s.k, w_, s.n, logits_ + s.row0 * ld_, ld_,
                  dx_ + s.row0 * s.n, s.n, Out::kBf16, 1, 0, nullptr);
        break;
    }
    done();
  }

 private:
  Gemm& gemm_;
  int64_t ld_;
  __nv_bfloat16 *x_, *w_, *logits_, *dx_;
  void* dw_;
};

}  // namespace

std::unique_ptr<KindOnGpu> on_gpu(const workload::LmHead& l, int chunks, GpuContext& gpu) {
  return std::make_unique<LmHeadOnGpu>(l, chunks, gpu);
}

std::unique_ptr<KindOnGpu> on_gpu(const workload::LmHeadProducts& p, int, GpuContext& gpu) {
  return std::make_unique<ProductsOnGpu>(p, gpu);
}

}  // namespace powershape::kernels
