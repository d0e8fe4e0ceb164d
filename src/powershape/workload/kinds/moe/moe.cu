// A mixture-of-experts layer on the GPU: the router's product (fp32 logits) and the experts'
// products through cuBLASLt, one strided-batched call over the experts; top-k, dispatch, gather,
// SwiGLU and combine are kernels of this file. A chunk's buffers are reused from chunk to chunk.
#include <cuda_bf16.h>

#include <cmath>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/kind_on_gpu.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"
#include "powershape/workload/kinds/moe/moe.hpp"

namespace powershape::kernels {
namespace {

constexpr int kMaxTopK = 16;

// A thread a token: its top-k experts by logit (ties to the lower expert) and the softmax of their
// logits.
__global__ void top_k_kernel(const float* logits, int64_t ld, int64_t rows, int experts, int k,
                             int* ids, float* weights) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= rows) return;
  const float* row = logits + t * ld;
  int chosen[kMaxTopK];
  float value[kMaxTopK];
  for (int c = 0; c < k; ++c) {
    int best = -1;
    for (int e = 0; e < experts; ++e) {
      bool taken = false;
      for (int p = 0; p < c; ++p) taken |= chosen[p] == e;
      if (!taken && (best < 0 || row[e] > row[best])) best = e;
    }
    chosen[c] = best;
    value[c] = row[best];
  }
  float sum = 0;
  for (int c = 0; c < k; ++c) sum += __expf(value[c] - value[0]);
  for (int c = 0; c < k; ++c) {
    ids[t * k + c] = chosen[c];
    weights[t * k + c] = __expf(value[c] - value[0]) / sum;
  }
}

// A block an expert: its choices in token order take its slots up to `cap`, the rest are dropped
// (slot_of -1); empty slots hold token -1. Each thread counts its own stretch of the choices, a
// scan of the counts gives each stretch its first slot.
__global__ void dispatch_kernel(const int* ids, int64_t choices, int k, int64_t cap,
                                int* slot_token, int* slot_of) {
  const int e = blockIdx.x;
  __shared__ int64_t first[1024];
  const int64_t per = (choices + blockDim.x - 1) / blockDim.x;
  const int64_t begin = threadIdx.x * per, end = min(choices, begin + per);
  int64_t mine = 0;
  for (int64_t i = begin; i < end; ++i) mine += ids[i] == e;
  first[threadIdx.x] = mine;
  __syncthreads();
  if (threadIdx.x == 0) {
    int64_t sum = 0;
    for (unsigned j = 0; j < blockDim.x; ++j) {
      const int64_t c = first[j];
      first[j] = sum;
      sum += c;
    }
    for (int64_t s = min(sum, cap); s < cap; ++s) slot_token[e * cap + s] = -1;
  }
  __syncthreads();
  int64_t slot = first[threadIdx.x];
  for (int64_t i = begin; i < end; ++i) {
    if (ids[i] != e) continue;
    if (slot < cap) {
      slot_token[e * cap + slot] = static_cast<int>(i / k);
      slot_of[i] = static_cast<int>(e * cap + slot);
    } else {
      slot_of[i] = -1;
    }
    ++slot;
  }
}

// A block a slot: its token's row of x, or zeros for an empty slot.
__global__ void gather_kernel(const __nv_bfloat16* x, const int* slot_token, int64_t d,
                              __nv_bfloat16* xp) {
  const int t = slot_token[blockIdx.x];
  __nv_bfloat16* out = xp + blockIdx.x * d;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
    out[i] = t >= 0 ? x[t * d + i] : __float2bfloat16(0.f);
}

// A block a slot: silu(gate) * up over its F values ([gate | up] in h).
__global__ void swiglu_kernel(const __nv_bfloat16* h, int64_t f, __nv_bfloat16* a) {
  const __nv_bfloat16* row = h + blockIdx.x * 2 * f;
  for (int64_t i = threadIdx.x; i < f; i += blockDim.x) {
    const float g = __bfloat162float(row[i]), u = __bfloat162float(row[f + i]);
    a[blockIdx.x * f + i] = __float2bfloat16(g / (1.f + __expf(-g)) * u);
  }
}

// A block a token: its experts' outputs, each times its weight, summed in choice order.
__global__ void combine_kernel(const __nv_bfloat16* y, const int* slot_of, const float* weights,
                               int k, int64_t d, __nv_bfloat16* out) {
  const int64_t t = blockIdx.x;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    float acc = 0;
    for (int c = 0; c < k; ++c) {
      const int s = slot_of[t * k + c];
      if (s >= 0) acc += weights[t * k + c] * __bfloat162float(y[s * d + i]);
    }
    out[t * d + i] = __float2bfloat16(acc);
  }
}

class MoeOnGpu : public KindOnGpu {
 public:
  MoeOnGpu(const workload::Moe& m, int chunks, GpuContext& gpu) : gemm_(gpu.gemm), m_(m) {
    if (m.width % 8 != 0 || m.ffn % 8 != 0)
      throw invalid_input("moe: D and the FFN width must be multiples of 8");
    const int64_t rows = workload::rows_per_chunk(m.tokens, chunks), cap = m.capacity(rows);
    const int64_t slots = m.experts * cap, e = m.experts, d = m.width, f = m.ffn;
    x_ = gpu.memory.random_bf16(m.tokens * d, 1, 1.0f);
    // Scales that keep the logits and activations near 1 (uniform inputs of +-scale).
    const float sd = 3.0f / std::sqrt(static_cast<float>(d));
    router_ = gpu.memory.random_bf16(e * d, 2, sd);
    w1_ = gpu.memory.random_bf16(e * 2 * f * d, 3, sd);
    w2_ = gpu.memory.random_bf16(e * d * f, 4, 3.0f / std::sqrt(static_cast<float>(f)));
    ld_r_ = (e + 3) / 4 * 4;
    logits_ = static_cast<float*>(gpu.memory.add(rows * ld_r_ * 4));
    ids_ = static_cast<int*>(gpu.memory.add(rows * m.top_k * 4));
    weights_ = static_cast<float*>(gpu.memory.add(rows * m.top_k * 4));
    slot_of_ = static_cast<int*>(gpu.memory.add(rows * m.top_k * 4));
    slot_token_ = static_cast<int*>(gpu.memory.add(slots * 4));
    xp_ = gpu.memory.bf16(slots * d);
    h_ = gpu.memory.bf16(slots * 2 * f);
    a_ = gpu.memory.bf16(slots * f);
    y_ = gpu.memory.bf16(slots * d);
    out_ = gpu.memory.bf16(m.tokens * d);
  }

  void launch(const workload::WorkloadStep& s, const std::function<void()>& done) override {
    using M = workload::Moe;
    const int64_t d = m_.width, k = m_.top_k;
    switch (s.code) {
      case M::kRouter:
        // logits_c [r x E] = X_c Router^T: column-major (E x r) = Router (d x E, transposed) *
        // X_c^T (d x r), in fp32.
        gemm_.run(true, false, s.n, s.m, s.k, router_, s.k, x_ + s.row0 * s.k, s.k, logits_, ld_r_,
                  Out::kFp32, 1, 0, nullptr);
        break;
      case M::kRoute:
        top_k_kernel<<<static_cast<unsigned>((s.m + 127) / 128), 128>>>(
            logits_, ld_r_, s.m, static_cast<int>(m_.experts), static_cast<int>(k), ids_, weights_);
        PS_LAUNCHED();
        dispatch_kernel<<<static_cast<unsigned>(m_.experts), 1024>>>(
            ids_, s.m * k, static_cast<int>(k), m_.capacity(s.m), slot_token_, slot_of_);
        PS_LAUNCHED();
        break;
      case M::kGather:
        gather_kernel<<<static_cast<unsigned>(s.batch * s.m), 128>>>(x_ + s.row0 * d, slot_token_,
                                                                     d, xp_);
        PS_LAUNCHED();
        break;
      case M::kUp:
      case M::kDown: {
        // Every expert e, one strided-batched call: out_e [cap x n] = in_e [cap x k] W_e^T (W_e
        // n x k): column-major (n x cap) = W_e (k x n, transposed) * in_e^T (k x cap).
        const bool up = s.code == M::kUp;
        const __nv_bfloat16 *w = up ? w1_ : w2_, *in = up ? xp_ : a_;
        __nv_bfloat16* out = up ? h_ : y_;
        gemm_.run_batched(true, false, s.n, s.m, s.k, w, s.k, in, s.k, out, s.n, Out::kBf16,
                          {s.batch, s.n * s.k, s.m * s.k, s.m * s.n}, nullptr);
        break;
      }
      case M::kSwiglu:
        swiglu_kernel<<<static_cast<unsigned>(s.batch * s.m), 256>>>(h_, s.n, a_);
        PS_LAUNCHED();
        break;
      case M::kCombine:
        combine_kernel<<<static_cast<unsigned>(s.m), 128>>>(
            y_, slot_of_, weights_, static_cast<int>(k), d, out_ + s.row0 * d);
        PS_LAUNCHED();
        break;
    }
    done();
  }

  std::map<std::string, std::vector<float>> tensors() const override {
    const int64_t e = m_.experts, d = m_.width, f = m_.ffn;
    return {{"x", to_host(x_, m_.tokens * d)},
            {"router", to_host(router_, e * d)},
            {"w1", to_host(w1_, e * 2 * f * d)},
            {"w2", to_host(w2_, e * d * f)},
            {"out", to_host(out_, m_.tokens * d)}};
  }

 private:
  Gemm& gemm_;
  workload::Moe m_;
  int64_t ld_r_ = 0;
  __nv_bfloat16 *x_, *router_, *w1_, *w2_, *xp_, *h_, *a_, *y_, *out_;
  float *logits_, *weights_;
  int *ids_, *slot_of_, *slot_token_;
};

}  // namespace

std::unique_ptr<KindOnGpu> on_gpu(const workload::Moe& m, int chunks, GpuContext& gpu) {
  return std::make_unique<MoeOnGpu>(m, chunks, gpu);
}

}  // namespace powershape::kernels
