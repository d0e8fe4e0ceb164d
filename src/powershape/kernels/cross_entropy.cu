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

__global__ void __launch_bounds__(kThreads) ce_kernel(CrossEntropyParams p) {
  const int64_t row = blockIdx.x;
  __nv_bfloat16* logits = p.logits + row * p.ld;
  const int64_t t = target_of(p.targets, p.targets_int64, row);
  const bool ignored = t == p.ignore_index;
  const bool bad = !ignored && (t < 0 || t >= p.v);  // an out-of-range target: NaN loss, no read
  const int64_t vec = p.ld / 8;  // ld is a multiple of 8: rows are 16-byte aligned
  float m = -INFINITY, s = 0, zsum = 0;
  for (int64_t i = threadIdx.x; i < vec; i += blockDim.x) {
    uint4 raw = reinterpret_cast<const uint4*>(logits)[i];
    const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&raw);
    float z[8];
    float lm = -INFINITY;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const bool in = i * 8 + k < p.v;
      z[k] = in ? capped(__bfloat162float(e[k]), p.softcap) : -INFINITY;
      lm = fmaxf(lm, z[k]);
      if (in) zsum += z[k];
    }
    float ls = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) ls += __expf(z[k] - lm);
    if (lm > -INFINITY) merge(m, s, lm, ls);
  }
  block_reduce(m, s, zsum);
  const float lse = m + logf(s);
  float loss = 0, zl = 0;
  if (bad) {
    loss = __int_as_float(0x7fc00000);
  } else if (!ignored) {
    const float zt = capped(__bfloat162float(logits[t]), p.softcap);
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
  const float smooth = p.label_smoothing / static_cast<float>(p.v);
  const float zfac = 1 + 2 * p.z_loss * lse;
  for (int64_t i = threadIdx.x; i < vec; i += blockDim.x) {
    uint4 raw = reinterpret_cast<const uint4*>(logits)[i];
    __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&raw);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const int64_t col = i * 8 + k;
      float g = 0;
      if (col < p.v && scale != 0.f) {
        const float x = __bfloat162float(e[k]);
        const float z = capped(x, p.softcap);
        g = __expf(z - lse) * zfac - smooth - (col == t ? 1 - p.label_smoothing : 0.f);
        if (p.softcap > 0) {
          const float c = z / p.softcap;
          g *= 1 - c * c;
        }
        g *= scale;
      }
      e[k] = __float2bfloat16(g);
    }
    reinterpret_cast<uint4*>(logits)[i] = raw;
  }
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
  ce_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(p);
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
