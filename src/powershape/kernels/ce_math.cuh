#pragma once
// The cross-entropy kernel's device arithmetic: the running (max, sum of exp) of a row, its
// block-wide merge, and the per-vector forward and gradient arithmetic on 8 bf16 logits.
#include <cuda_bf16.h>

#include <cstdint>

#include "powershape/kernels/cross_entropy.cuh"

namespace powershape::kernels::ce {

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float capped(float x, float cap) {
  return cap > 0 ? cap * tanhf(x / cap) : x;
}

__device__ __forceinline__ int64_t target_of(const void* t, bool i64, int64_t row) {
  return i64 ? static_cast<const int64_t*>(t)[row] : static_cast<const int32_t*>(t)[row];
}

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// (max, sum of exp(z - max)) pairs merge like this.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  if (m2 > m) {
    s = s * __expf(m - m2) + s2;
    m = m2;
  } else if (m2 > -INFINITY) {
    s += s2 * __expf(m2 - m);
  }
}

// Block-wide merge of (m, s) and sum of z; every thread gets the result. Ends with a barrier.
__device__ inline void block_reduce(float& m, float& s, float& zsum) {
  __shared__ float sm[32], ss[32], sz[32];
  for (int o = 16; o > 0; o >>= 1) {
    float m2 = __shfl_xor_sync(0xffffffff, m, o), s2 = __shfl_xor_sync(0xffffffff, s, o);
    merge(m, s, m2, s2);
    zsum += __shfl_xor_sync(0xffffffff, zsum, o);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sm[warp] = m;
    ss[warp] = s;
    sz[warp] = zsum;
  }
  __syncthreads();
  if (warp == 0) {
    const int nw = blockDim.x / 32;
    m = lane < nw ? sm[lane] : -INFINITY;
    s = lane < nw ? ss[lane] : 0;
    zsum = lane < nw ? sz[lane] : 0;
    for (int o = 16; o > 0; o >>= 1) {
      float m2 = __shfl_xor_sync(0xffffffff, m, o), s2 = __shfl_xor_sync(0xffffffff, s, o);
      merge(m, s, m2, s2);
      zsum += __shfl_xor_sync(0xffffffff, zsum, o);
    }
    if (lane == 0) {
      sm[0] = m;
      ss[0] = s;
      sz[0] = zsum;
    }
  }
  __syncthreads();
  m = sm[0];
  s = ss[0];
  zsum = sz[0];
}

// Block-wide max and sum: every thread gets the result (each warp reduces the warps' partials
// itself, so no broadcast is needed). Two barriers; the second lets the next call reuse `part`.
template <bool kMax>
__device__ inline float block_fold(float v) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffff, v, o);
    v = kMax ? fmaxf(v, w) : v + w;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < static_cast<int>(blockDim.x / 32) ? part[lane] : (kMax ? -INFINITY : 0.f);
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffff, v, o);
    v = kMax ? fmaxf(v, w) : v + w;
  }
  __syncthreads();
  return v;
}

// The 8 bf16 of a 16-byte vector as floats (a bf16 is the top half of a float).
__device__ __forceinline__ void unpack(const uint4& raw, float (&z)[8]) {
  const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    z[2 * k] = __uint_as_float(w[k] << 16);
    z[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
  }
}

__device__ __forceinline__ uint32_t pack(float lo, float hi) {
  __nv_bfloat162 b = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&b);
}

// The 8 bf16 of a 16-byte vector, each times f.
__device__ __forceinline__ uint4 scaled(const uint4& raw, float f) {
  float z[8];
  unpack(raw, z);
  return make_uint4(pack(z[0] * f, z[1] * f), pack(z[2] * f, z[3] * f), pack(z[4] * f, z[5] * f),
                    pack(z[6] * f, z[7] * f));
}

// Adds the first `count` logits of a vector (8: a whole one, on the fast path) to the running
// (m, s) and, with label smoothing, to zsum.
template <bool kSoftcap>
__device__ __forceinline__ void accumulate(const uint4& raw, int count, float cap, bool smoothing,
                                           float& m, float& s, float& zsum) {
  float z[8];
  unpack(raw, z);
  if (count < 8) {  // a row's last, partial vector (unrolled: z stays in registers)
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (k >= count) break;
      const float zk = kSoftcap ? cap * tanhf(z[k] / cap) : z[k];
      merge(m, s, zk, 1.f);
      zsum += zk;
    }
    return;
  }
  float lm = -INFINITY;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    if (kSoftcap) z[k] = cap * tanhf(z[k] / cap);
    lm = fmaxf(lm, z[k]);
  }
  if (lm > m) {
    s *= ex2((m - lm) * kLog2e);
    m = lm;
  }
  if (lm > -INFINITY) {
    const float mb = m * kLog2e;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += ex2(fmaf(z[k], kLog2e, -mb));
  }
  if (smoothing) {
#pragma unroll
    for (int k = 0; k < 8; ++k) zsum += z[k];
  }
}

// What the gradient of one row needs: g = a softmax + b, plus hit at the target, times
// 1 - (z / cap)^2 under a soft-cap; a = scale (1 + 2 z_loss lse), b = -scale smoothing / V,
// hit = -scale (1 - smoothing).
struct Grad {
  float a, b, hit, lb, cap;  // lb = lse log2(e)
  int tv, tk;                // the target's vector and place in it (tv = -1: none)

  __device__ Grad(const CrossEntropyParams& p, float scale, float lse, int64_t t, bool valid)
      : a(scale * (1 + 2 * p.z_loss * lse)),
        b(-scale * p.label_smoothing / static_cast<float>(p.v)),
        hit(-scale * (1 - p.label_smoothing)),
        lb(lse * kLog2e),
        cap(p.softcap),
        tv(valid ? static_cast<int>(t / 8) : -1),
        tk(valid ? static_cast<int>(t % 8) : 0) {}

  // The gradient of vector i (its first `count` logits; the rest of it zero).
  template <bool kSoftcap>
  __device__ __forceinline__ uint4 of(const uint4& raw, int i, int count) const {
    float z[8], g[8];
    unpack(raw, z);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (kSoftcap) z[k] = cap * tanhf(z[k] / cap);
      g[k] = fmaf(a, ex2(fmaf(z[k], kLog2e, -lb)), b);
    }
    if (i == tv) {
#pragma unroll
      for (int k = 0; k < 8; ++k) g[k] += k == tk ? hit : 0.f;
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (kSoftcap) {
        const float c = z[k] / cap;
        g[k] *= 1 - c * c;
      }
      if (k >= count) g[k] = 0;
    }
    return make_uint4(pack(g[0], g[1]), pack(g[2], g[3]), pack(g[4], g[5]), pack(g[6], g[7]));
  }
};

// The loss of a row from its lse, target logit and logit sum; NaN for an out-of-range target.
__device__ __forceinline__ float row_loss(const CrossEntropyParams& p, float lse, float zt,
                                          float zsum, bool ignored, bool bad, float& zl) {
  zl = 0;
  if (bad) return __int_as_float(0x7fc00000);
  if (ignored) return 0;
  zl = p.z_loss * lse * lse;
  const float eps = p.label_smoothing;
  return (1 - eps) * (lse - zt) + eps * (lse - zsum / static_cast<float>(p.v)) + zl;
}

// The gradient's scale for a row of the chunk: 0 for an ignored or out-of-range target.
__device__ __forceinline__ float grad_scale(const CrossEntropyParams& p, int64_t row, bool ignored,
                                            bool bad) {
  if (ignored || bad) return 0.f;
  const float s = p.grad_scale / (p.mean ? fmaxf(static_cast<float>(*p.valid_count), 1.f) : 1.f);
  return p.token_grad != nullptr ? s * p.token_grad[row] : s;
}

// The end of a one-read row (cross_entropy_scaled, logits_exp_finish): the loss, z-loss and lse
// from the row's offset c, its sum s of exp(z - c) and its target's soft-capped logit zt (unused
// for an ignored or out-of-range target); then the gradient's row factor, and the target's own
// entry, a p_t + h with its cancellation done in fp32, written over the target's exp(z - c)
// divided by that factor.
__device__ inline void finish_one_read_row(const CrossEntropyParams& p, int64_t row, float c,
                                           float s, float zt) {
  const int64_t t = target_of(p.targets, p.targets_int64, row);
  const bool ignored = t == p.ignore_index, bad = !ignored && (t < 0 || t >= p.v);
  const float scale = grad_scale(p, row, ignored, bad);
  const float lse = c + logf(s);
  float zl = 0;
  p.token_loss[row] = row_loss(p, lse, zt, 0.f, ignored, bad, zl);
  p.token_zloss[row] = zl;
  p.lse[row] = lse;
  if (!p.write_grad) return;
  float alpha = 0;
  if (scale != 0.f) {
    // The gradient a p + h at the target, h = -scale: a (p_t - 1) + (a + h), p_t - 1 as expm1.
    const float a = scale * (1 + 2 * p.z_loss * lse);
    float gamma = a * expm1f(zt - lse) + 2 * scale * p.z_loss * lse;
    if (p.softcap > 0) {
      const float q = zt / p.softcap;
      gamma *= 1 - q * q;
    }
    alpha = a / s;
    p.logits[row * p.ld + t] = __float2bfloat16(a != 0.f ? gamma * s / a : 0.f);
  }
  p.row_scale[row] = alpha;
}

}  // namespace powershape::kernels::ce
