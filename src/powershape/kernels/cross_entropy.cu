#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/kernels/cuda_check.hpp"

namespace powershape::kernels {
namespace {

constexpr int kThreads = 512;

__device__ __forceinline__ float capped(float x, float cap) { return cap > 0 ? cap * tanhf(x / cap) : x; }

__device__ __forceinline__ int64_t target_of(const void* t, bool i64, int64_t row) {
  return i64 ? static_cast<const int64_t*>(t)[row] : static_cast<const int32_t*>(t)[row];
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

// Block-wide merge of (m, s) and sum of z; every thread gets the result.
__device__ void block_reduce(float& m, float& s, float& zsum) {
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

constexpr int kUnroll = 4;  // 16-byte loads in flight per thread
constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
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

// One block a row, two reads of it from memory (the second mostly from L2) and one write. Only a
// row's last vector can hold columns past V; the vectors before it take a path with no per-logit
// bounds checks, exponentials as one FFMA and one MUFU each, and the target handled once a vector.
template <bool kSoftcap>
__global__ void __launch_bounds__(kThreads, kSoftcap ? 2 : 3) ce_kernel(CrossEntropyParams p) {
  const int64_t row = blockIdx.x;
  uint4* vecs = reinterpret_cast<uint4*>(p.logits + row * p.ld);
  const int64_t t = target_of(p.targets, p.targets_int64, row);
  const bool ignored = t == p.ignore_index;
  const bool bad = !ignored && (t < 0 || t >= p.v);  // an out-of-range target: NaN loss, no read
  const int vec = static_cast<int>(p.ld / 8);        // ld is a multiple of 8: rows are 16-byte aligned
  const int full = static_cast<int>(p.v / 8);        // vectors wholly inside the row's V logits
  const bool smoothing = p.label_smoothing > 0;
  const float cap = p.softcap;
  float m = -INFINITY, s = 0, zsum = 0;
  for (int base = threadIdx.x; base < full; base += kUnroll * kThreads) {
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * kThreads < full) r[u] = vecs[base + u * kThreads];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * kThreads >= full) break;
      float z[8];
      unpack(r[u], z);
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
  }
  if (full < vec && threadIdx.x == 0) {  // the last, partial vector
    float z[8];
    unpack(vecs[full], z);
    for (int k = 0; k < 8 && static_cast<int64_t>(full) * 8 + k < p.v; ++k) {
      const float zk = kSoftcap ? cap * tanhf(z[k] / cap) : z[k];
      merge(m, s, zk, 1.f);
      zsum += zk;
    }
  }
  block_reduce(m, s, zsum);
  const float lse = m + logf(s);
  float loss = 0, zl = 0;
  if (bad) {
    loss = __int_as_float(0x7fc00000);
  } else if (!ignored) {
    const float zt = capped(__bfloat162float(p.logits[row * p.ld + t]), cap);
    zl = p.z_loss * lse * lse;
    const float eps = p.label_smoothing;
    loss = (1 - eps) * (lse - zt) + eps * (lse - zsum / static_cast<float>(p.v)) + zl;
  }
  if (threadIdx.x == 0) {
    p.token_loss[row] = loss;
    p.token_zloss[row] = zl;
    p.lse[row] = lse;
  }
  if (!p.write_grad) return;
  __syncthreads();  // every thread has read logits[t] before any overwrites it
  const float scale = ignored || bad ? 0.f : p.grad_scale / (p.mean ? fmaxf(static_cast<float>(*p.valid_count), 1.f) : 1.f);
  if (scale == 0.f) {  // an ignored (or bad) token: a zero gradient, nothing to read
    for (int i = threadIdx.x; i < vec; i += kThreads) vecs[i] = make_uint4(0, 0, 0, 0);
    return;
  }
  // g = scale * (softmax * (1 + 2 z_loss lse) - smoothing / V - (1 - smoothing) [col == t]),
  // times 1 - (z / cap)^2 under a soft-cap.
  const float a = scale * (1 + 2 * p.z_loss * lse);
  const float b = -scale * p.label_smoothing / static_cast<float>(p.v);
  const float hit = -scale * (1 - p.label_smoothing);
  const float lb = lse * kLog2e;
  const int tv = static_cast<int>(t / 8), tk = static_cast<int>(t % 8);
  auto grad = [&](const uint4& raw, int i, int k_end) {
    float z[8], g[8];
    unpack(raw, z);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const float zk = kSoftcap ? cap * tanhf(z[k] / cap) : z[k];
      g[k] = fmaf(a, ex2(fmaf(zk, kLog2e, -lb)), b);
      if (kSoftcap) z[k] = zk;
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
      if (k >= k_end) g[k] = 0;
    }
    return make_uint4(pack(g[0], g[1]), pack(g[2], g[3]), pack(g[4], g[5]), pack(g[6], g[7]));
  };
  for (int base = threadIdx.x; base < full; base += kUnroll * kThreads) {
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * kThreads < full) r[u] = vecs[base + u * kThreads];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kThreads;
      if (i >= full) break;
      vecs[i] = grad(r[u], i, 8);
    }
  }
  if (full < vec && threadIdx.x == 0) vecs[full] = grad(vecs[full], full, static_cast<int>(p.v - static_cast<int64_t>(full) * 8));
}

__global__ void count_kernel(const void* t, bool i64, int64_t n, int64_t ignore, int* count) {
  int c = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    c += target_of(t, i64, i) != ignore;
  }
  for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(0xffffffff, c, o);
  if (threadIdx.x % 32 == 0 && c > 0) atomicAdd(count, c);
}

__global__ void reduce_kernel(const float* v, int64_t n, const int* valid, bool divide, float* out) {
  __shared__ double part[1024];
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += v[i];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const double div = divide ? (*valid > 0 ? *valid : 1) : 1;
    *out = static_cast<float>(part[0] / div);
  }
}

}  // namespace

void cross_entropy(const CrossEntropyParams& p, int64_t rows, cudaStream_t stream) {
  if (rows == 0) return;
  if (p.softcap > 0) {
    ce_kernel<true><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(p);
  } else {
    ce_kernel<false><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(p);
  }
  PS_LAUNCHED();
}

void count_valid(const void* targets, bool int64, int64_t n, int64_t ignore_index, int* count, cudaStream_t stream) {
  PS_CUDA(cudaMemsetAsync(count, 0, sizeof(int), stream));
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 1024));
  count_kernel<<<blocks, 256, 0, stream>>>(targets, int64, n, ignore_index, count);
  PS_LAUNCHED();
}

void reduce_sum(const float* values, int64_t n, const int* valid, bool divide_by_valid, float* out, cudaStream_t stream) {
  reduce_kernel<<<1, 1024, 0, stream>>>(values, n, valid, divide_by_valid, out);
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
