// Causal attention, unfused, on the GPU: Q K V [SEQ x HEADS x HEAD_DIM] bf16 (tokens first, as a
// model's projections leave them), one chunk of every head's scores S [HEADS x r x SEQ'] (rows
// padded to 8; head h's from h x r rows on), O like Q. A chunk's products are one strided-batched
// cuBLASLt call over the heads, as PyTorch's bmm; its softmax one kernel over every head's rows.
#include <cuda_bf16.h>

#include <cmath>

#include "powershape/kernels/block_reduce.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/kind_on_gpu.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"
#include "powershape/workload/kinds/attention/attention.hpp"

namespace powershape::kernels {
namespace {

// Row i of `rows_per_head`-row blocks is query row0 + i % rows_per_head; it sees keys 0 to that
// query. Its softmax of scale * s over those, and 0 beyond (so that P V over every key of the
// chunk is the causal product). Three passes as the unmasked softmax (max, sum, write): the first
// two over the keys it sees, the third over every key (the masked ones written 0), the phase
// counting every key read in each (an upper bound).
__global__ void causal_softmax_kernel(__nv_bfloat16* p, int64_t cols, int64_t ld,
                                      int64_t rows_per_head, int64_t row0, float scale) {
  __nv_bfloat16* row = p + blockIdx.x * ld;
  const int64_t seen = row0 + blockIdx.x % rows_per_head + 1;  // keys 0 .. the query itself
  __shared__ float red[32];
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < seen; i += blockDim.x) m = fmaxf(m, __bfloat162float(row[i]));
  m = block_max(m, red);
  float s = 0;
  for (int64_t i = threadIdx.x; i < seen; i += blockDim.x)
    s += __expf((__bfloat162float(row[i]) - m) * scale);
  const float inv = 1.f / block_sum(s, red);
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    const float e = __expf((__bfloat162float(row[i]) - m) * scale) * inv;
    row[i] = __float2bfloat16(i < seen ? e : 0.f);
  }
}

class AttentionOnGpu : public KindOnGpu {
 public:
  AttentionOnGpu(const workload::Attention& a, int chunks, GpuContext& gpu)
      : gemm_(gpu.gemm),
        heads_(a.heads),
        d_(a.head_dim),
        seq_(a.seq),
        rows_(workload::rows_per_chunk(a.seq, chunks)),
        ld_s_((a.seq + 7) / 8 * 8) {
    if (a.head_dim % 8 != 0)
      throw invalid_input("attention: the head size must be a multiple of 8");
    const int64_t n = a.seq * a.heads * a.head_dim;
    q_ = gpu.memory.random_bf16(n, 1, 1.0f);
    k_ = gpu.memory.random_bf16(n, 2, 1.0f);
    v_ = gpu.memory.random_bf16(n, 3, 1.0f);
    s_ = gpu.memory.bf16(a.heads * rows_ * ld_s_);  // one chunk of every head's scores
    o_ = gpu.memory.bf16(n);
  }

  void launch(const workload::WorkloadStep& s, const std::function<void()>& done) override {
    const int64_t ld = heads_ * d_;      // between two tokens' rows of one head in Q, K, V, O
    const int64_t scores = s.m * ld_s_;  // one head's scores in this chunk, the next head's after
    switch (s.code) {
      case workload::Attention::kQk:
        // Every head h: S_h [r x keys] = Q_h,c K_h^T; column-major (keys x r) = K_h (d x keys,
        // transposed) * Q_h,c^T (d x r). Head h's Q, K start h x d values into each token's row.
        gemm_.run_batched(true, false, s.n, s.m, s.k, k_, ld, q_ + s.row0 * ld, ld, s_, ld_s_,
                          Out::kBf16, {s.batch, d_, d_, scores}, nullptr);
        break;
      case workload::Attention::kSoftmax:
        causal_softmax_kernel<<<static_cast<unsigned>(s.batch * s.m), 512>>>(
            s_, s.n, ld_s_, s.m, s.row0, 1.0f / std::sqrt(static_cast<float>(d_)));
        PS_LAUNCHED();
        break;
      case workload::Attention::kPv:
        // Every head h: O_h,c [r x d] = P_h V_h; column-major (d x r) = V_h^T (d x keys) * P_h^T
        // (keys x r).
        gemm_.run_batched(false, false, s.n, s.m, s.k, v_, ld, s_, ld_s_, o_ + s.row0 * ld, ld,
                          Out::kBf16, {s.batch, d_, scores, d_}, nullptr);
        break;
    }
    done();
  }

  std::map<std::string, std::vector<float>> tensors() const override {
    const int64_t n = seq_ * heads_ * d_;
    return {
        {"q", to_host(q_, n)}, {"k", to_host(k_, n)}, {"v", to_host(v_, n)}, {"o", to_host(o_, n)}};
  }

 private:
  Gemm& gemm_;
  int64_t heads_, d_, seq_, rows_, ld_s_;
  __nv_bfloat16 *q_, *k_, *v_, *s_, *o_;
};

}  // namespace

std::unique_ptr<KindOnGpu> on_gpu(const workload::Attention& a, int chunks, GpuContext& gpu) {
  return std::make_unique<AttentionOnGpu>(a, chunks, gpu);
}

}  // namespace powershape::kernels
