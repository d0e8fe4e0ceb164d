#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/kernels/cuda_check.hpp"

#include <cooperative_groups.h>

#include <algorithm>

namespace powershape::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread

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

// Adds 8 logits (one 16-byte vector, columns col..col+7 of which those < v count) to the running
// (max, sum of exp) and the sum of the logits.
__device__ __forceinline__ void accumulate(const uint4& raw, int64_t col, const CrossEntropyParams& p, float& m,
                                           float& s, float& zsum) {
  const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&raw);
  float z[8];
  float lm = -INFINITY;
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const bool in = col + k < p.v;
    z[k] = in ? capped(__bfloat162float(e[k]), p.softcap) : -INFINITY;
    lm = fmaxf(lm, z[k]);
    if (in) zsum += z[k];
  }
  float ls = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) ls += __expf(z[k] - lm);
  if (lm > -INFINITY) merge(m, s, lm, ls);
}

// The part of a row's reduction one block of its cluster publishes to the others.
struct Partial {
  float m, s, zsum, zt;
};

// A cluster of blocks a row, each block one segment of it. The first pass streams the segment from
// memory once into shared memory (its first `cached` vectors: all of it unless the row is over
// ~1.6 M logits) and reduces it; the blocks merge their partials through distributed shared
// memory; the second pass reads the segment back from shared memory and writes the gradient over
// the logits. Several blocks a multiprocessor keep memory busy while others sit at a barrier.
__global__ void __launch_bounds__(kThreads) ce_kernel(CrossEntropyParams p, int64_t seg_vecs, int64_t cached) {
  extern __shared__ uint4 cache[];
  __shared__ Partial part;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank(), blocks = cluster.num_blocks();
  const int64_t row = blockIdx.x / blocks;
  const int64_t vec = p.ld / 8;  // ld is a multiple of 8: rows are 16-byte aligned
  const int64_t v0 = rank * seg_vecs, v1 = v0 + seg_vecs < vec ? v0 + seg_vecs : vec, nv = v1 > v0 ? v1 - v0 : 0;
  uint4* vecs = reinterpret_cast<uint4*>(p.logits + row * p.ld) + v0;
  const int64_t t = target_of(p.targets, p.targets_int64, row);
  const bool ignored = t == p.ignore_index;
  const bool bad = !ignored && (t < 0 || t >= p.v);  // an out-of-range target: NaN loss, no read
  const unsigned owner = bad || ignored ? 0 : static_cast<unsigned>(t / 8 / seg_vecs);  // whose segment holds t
  const int64_t stride = blockDim.x;
  float m = -INFINITY, s = 0, zsum = 0;
  for (int64_t base = threadIdx.x; base < nv; base += kUnroll * stride) {
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + u * stride;
      if (i < nv) r[u] = i < cached ? __ldcs(vecs + i) : vecs[i];  // the cached part is not read again
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + u * stride;
      if (i >= nv) break;
      if (i < cached) cache[i] = r[u];
      accumulate(r[u], (v0 + i) * 8, p, m, s, zsum);
    }
  }
  block_reduce(m, s, zsum);  // ends with a barrier: the cache is complete
  if (threadIdx.x == 0) {
    float zt = 0;
    if (!ignored && !bad && rank == owner) {
      const int64_t i = t / 8 - v0;
      const uint4 raw = i < cached ? cache[i] : vecs[i];
      zt = capped(__bfloat162float(reinterpret_cast<const __nv_bfloat16*>(&raw)[t % 8]), p.softcap);
    }
    part = {m, s, zsum, zt};
  }
  cluster.sync();
  float zt = 0;
  m = -INFINITY;
  s = zsum = 0;
  for (unsigned b = 0; b < blocks; ++b) {
    const Partial q = *cluster.map_shared_rank(&part, b);
    merge(m, s, q.m, q.s);
    zsum += q.zsum;
    if (b == owner) zt = q.zt;
  }
  const float lse = m + logf(s);
  float loss = 0, zl = 0;
  if (bad) {
    loss = __int_as_float(0x7fc00000);
  } else if (!ignored) {
    zl = p.z_loss * lse * lse;
    const float eps = p.label_smoothing;
    loss = (1 - eps) * (lse - zt) + eps * (lse - zsum / static_cast<float>(p.v)) + zl;
  }
  if (rank == 0 && threadIdx.x == 0) {
    p.token_loss[row] = loss;
    p.token_zloss[row] = zl;
    p.lse[row] = lse;
  }
  if (p.write_grad) {
    const float scale = ignored || bad ? 0.f : p.grad_scale / (p.mean ? fmaxf(static_cast<float>(*p.valid_count), 1.f) : 1.f);
    const float smooth = p.label_smoothing / static_cast<float>(p.v);
    const float zfac = 1 + 2 * p.z_loss * lse;
    for (int64_t base = threadIdx.x; base < nv; base += kUnroll * stride) {
      uint4 r[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + u * stride;
        if (i < nv) r[u] = i < cached ? cache[i] : vecs[i];
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int64_t i = base + u * stride;
        if (i >= nv) break;
        __nv_bfloat16* e = reinterpret_cast<__nv_bfloat16*>(&r[u]);
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const int64_t col = (v0 + i) * 8 + k;
          float g = 0;
          if (col < p.v && scale != 0.f) {
            const float z = capped(__bfloat162float(e[k]), p.softcap);
            g = __expf(z - lse) * zfac - smooth - (col == t ? 1 - p.label_smoothing : 0.f);
            if (p.softcap > 0) {
              const float c = z / p.softcap;
              g *= 1 - c * c;
            }
            g *= scale;
          }
          e[k] = __float2bfloat16(g);
        }
        vecs[i] = r[u];
      }
    }
  }
  cluster.sync();  // no block leaves while another may still read its partial
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
  static const int max_smem = [] {
    int dev = 0, optin = 0;
    PS_CUDA(cudaGetDevice(&dev));
    PS_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    cudaFuncAttributes fa{};
    PS_CUDA(cudaFuncGetAttributes(&fa, ce_kernel));
    const int dynamic = optin - static_cast<int>(fa.sharedSizeBytes);
    PS_CUDA(cudaFuncSetAttribute(ce_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic));
    return dynamic;
  }();
  // The fewest blocks a row (1, 2, 4 or 8: a portable cluster) whose segments are at most 48 KB,
  // so that several blocks share a multiprocessor.
  const int64_t vec = p.ld / 8;
  unsigned blocks = 1;
  while (blocks < 8 && (vec + blocks - 1) / blocks * static_cast<int64_t>(sizeof(uint4)) > (48 << 10)) blocks *= 2;
  const int64_t seg_vecs = (vec + blocks - 1) / blocks;
  const int64_t cached = std::min<int64_t>(seg_vecs, max_smem / static_cast<int>(sizeof(uint4)));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(rows) * blocks);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = static_cast<std::size_t>(cached) * sizeof(uint4);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = blocks;
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  PS_CUDA(cudaLaunchKernelEx(&cfg, ce_kernel, p, seg_vecs, cached));
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
