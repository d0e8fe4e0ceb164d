// The one-read cross-entropy pass. Each row is read once: the row's first round of loads (16384
// logits) sets an offset c, every logit z becomes e = exp(z - c), the sum of e gives the
// log-sum-exp, and e (times the soft-cap's derivative) is written over z at once. The gradient is
// then a e^(c - lse) x e = (a / sum e) x e: one factor a row, row_scale, which the LM head folds
// into the products (X scaled by it before dW, dX scaled by it after). The target's own entry, a
// p_t + h with its cancellation done in fp32, is written last, divided by row_scale. After the
// first round the threads do not wait for each other: a thread whose logits exceed its offset by
// more than kRaise raises its own offset and rescales what it has written; at the end of the row
// the threads below the row's largest offset rescale theirs (both rare), so that one factor serves
// the row.
#include <cuda_bf16.h>

#include <stdexcept>

#include "powershape/kernels/ce_math.cuh"
#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/multiprocessors.hpp"
#include "powershape/util/error.hpp"

namespace powershape::kernels {
namespace {

using namespace ce;

constexpr int kThreads = 512;
constexpr int kUnroll = 4;      // 16-byte loads in flight per thread
constexpr float kRaise = 30.f;  // e stays below e^30 (bf16 and fp32 hold up to e^88)

// The logits of a vector (the first `count`; the rest -inf), soft-capped.
template <bool kSoftcap>
__device__ __forceinline__ void logits_of(const uint4& raw, int count, float cap, float (&z)[8]) {
  unpack(raw, z);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    if (kSoftcap) z[k] = cap * tanhf(z[k] / cap);
  }
  if (count < 8) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (k >= count) z[k] = -INFINITY;
    }
  }
}

template <bool kSoftcap>
__device__ __forceinline__ float max_of(const uint4& raw, int count, float cap) {
  float z[8];
  logits_of<kSoftcap>(raw, count, cap, z);
  float m = z[0];
#pragma unroll
  for (int k = 1; k < 8; ++k) m = fmaxf(m, z[k]);
  return m;
}

// exp(z - c) of a vector, added to s; returned packed, times the soft-cap's derivative.
template <bool kSoftcap>
__device__ __forceinline__ uint4 exp_of(const uint4& raw, int count, float cap, float cl,
                                        float& s) {
  float z[8], g[8];
  logits_of<kSoftcap>(raw, count, cap, z);
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const float e = ex2(fmaf(z[k], kLog2e, -cl));
    s += e;
    if (kSoftcap) {
      const float q = z[k] / cap;
      g[k] = k < count ? e * (1 - q * q) : 0.f;
    } else {
      g[k] = e;
    }
  }
  return make_uint4(pack(g[0], g[1]), pack(g[2], g[3]), pack(g[4], g[5]), pack(g[6], g[7]));
}

// Rare (a later round far above the first): kept out of line, so that its registers do not
// crowd the main loop's.
__device__ __noinline__ void rescale(uint4* vecs, int end, float f) {
  for (int i = static_cast<int>(threadIdx.x); i < end; i += kThreads) vecs[i] = scaled(vecs[i], f);
}

template <bool kSoftcap>
__global__ void __launch_bounds__(kThreads, kSoftcap ? 2 : 3)
    ce_scaled_kernel(CrossEntropyParams p) {
  __shared__ float zt_raw;  // the target's logit, read before any thread overwrites it
  const int64_t row = blockIdx.x;
  uint4* vecs = reinterpret_cast<uint4*>(p.logits + row * p.ld);
  bool write;  // else zeros (an ignored or bad token) or, in the forward pass, nothing
  {
    const int64_t t = target_of(p.targets, p.targets_int64, row);
    const bool ignored = t == p.ignore_index, bad = !ignored && (t < 0 || t >= p.v);
    if (threadIdx.x == 0)
      zt_raw = ignored || bad ? 0.f : __bfloat162float(p.logits[row * p.ld + t]);
    write = grad_scale(p, row, ignored, bad) != 0.f;
  }
  const int full = static_cast<int>(p.v / 8);        // whole vectors
  const int nvec = static_cast<int>((p.v + 7) / 8);  // with the partial one
  const int last =
      static_cast<int>(p.v - static_cast<int64_t>(full) * 8);  // logits in the partial one
  float c = 0, s = 0;  // this thread's offset and its sum of exp(z - c)
  for (int r0 = 0; r0 < nvec; r0 += kUnroll * kThreads) {  // the same trip count in every thread
    uint4 r[kUnroll];
    float lm = -INFINITY;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = r0 + u * kThreads + static_cast<int>(threadIdx.x);
      if (i < nvec) r[u] = vecs[i];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = r0 + u * kThreads + static_cast<int>(threadIdx.x);
      if (i < nvec) lm = fmaxf(lm, max_of<kSoftcap>(r[u], i < full ? 8 : last, p.softcap));
    }
    if (r0 == 0) {
      c = block_fold<true>(
          lm);  // also orders thread 0's read of the target's logit before any write
    } else if (lm > c + kRaise) {
      const float f = ex2((c - lm) * kLog2e);
      s *= f;
      if (p.write_grad && write)
        rescale(vecs, r0, f);  // what this thread wrote in the rounds before
      c = lm;
    }
    const float cl = c * kLog2e;
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = r0 + u * kThreads + static_cast<int>(threadIdx.x);
      if (i < nvec) {
        const uint4 e = exp_of<kSoftcap>(r[u], i < full ? 8 : last, p.softcap, cl, s);
        if (p.write_grad) vecs[i] = write ? e : make_uint4(0, 0, 0, 0);
      }
    }
  }
  {
    const float top = block_fold<true>(c);
    const float f = ex2((c - top) * kLog2e);
    if (c < top && p.write_grad && write) rescale(vecs, nvec, f);  // rare: another thread raised
    s *= f;
    c = top;
  }
  s = block_fold<false>(s);  // its barriers also order every write of the row before the target's
  if (threadIdx.x == 0) finish_one_read_row(p, row, c, s, capped(zt_raw, p.softcap));
}

__global__ void scale_rows_kernel(const uint4* in, const float* scale, int64_t rows,
                                  int64_t vecs_per_row, uint4* out) {
  const int64_t n = rows * vecs_per_row;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = scaled(in[i], scale[i / vecs_per_row]);
  }
}

}  // namespace

void cross_entropy_scaled(const CrossEntropyParams& p, int64_t rows, cudaStream_t stream) {
  if (p.label_smoothing != 0.f)
    throw invalid_input("cross_entropy_scaled: label smoothing needs cross_entropy");
  if (p.write_grad && p.row_scale == nullptr)
    throw invalid_input("cross_entropy_scaled: row_scale is required");
  if (rows == 0) return;
  if (p.softcap > 0) {
    ce_scaled_kernel<true><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(p);
  } else {
    ce_scaled_kernel<false><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(p);
  }
  PS_LAUNCHED();
}

void scale_rows(const __nv_bfloat16* in, const float* scale, int64_t rows, int64_t d,
                __nv_bfloat16* out, cudaStream_t stream) {
  if (d % 8 != 0) throw invalid_input("scale_rows: d must be a multiple of 8");
  if (rows == 0) return;
  const int64_t n = rows * (d / 8);
  const unsigned blocks =
      static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, int64_t{16} * multiprocessors()));
  scale_rows_kernel<<<blocks, 256, 0, stream>>>(reinterpret_cast<const uint4*>(in), scale, rows,
                                                d / 8, reinterpret_cast<uint4*>(out));
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
