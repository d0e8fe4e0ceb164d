#include <algorithm>
#include <stdexcept>

#include "powershape/kernels/ce_math.cuh"
#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/util/error.hpp"

namespace powershape::kernels {
namespace {

using namespace ce;

constexpr int kThreads = 512;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread

// One block a row, two reads of it from memory (the second mostly from L2) and one write. Only a
// row's last vector can hold columns past V: the others take a path with no per-logit bounds
// checks, exponentials as one FFMA and one MUFU each, and the target looked for once a vector.
template <bool kSoftcap>
__global__ void __launch_bounds__(kThreads, kSoftcap ? 2 : 3) ce_kernel(CrossEntropyParams p) {
  const int64_t row = blockIdx.x;
  uint4* vecs = reinterpret_cast<uint4*>(p.logits + row * p.ld);
  const int64_t t = target_of(p.targets, p.targets_int64, row);
  const bool ignored = t == p.ignore_index;
  const bool bad = !ignored && (t < 0 || t >= p.v);  // an out-of-range target: NaN loss, no read
  const int vec = static_cast<int>(p.ld / 8);  // ld is a multiple of 8: rows are 16-byte aligned
  const int full = static_cast<int>(p.v / 8);  // vectors wholly inside the row's V logits
  const int last =
      static_cast<int>(p.v - static_cast<int64_t>(full) * 8);  // logits in the partial one
  const bool smoothing = p.label_smoothing > 0;
  float m = -INFINITY, s = 0, zsum = 0;
  for (int base = threadIdx.x; base < full; base += kUnroll * kThreads) {
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * kThreads < full) r[u] = vecs[base + u * kThreads];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * kThreads < full)
        accumulate<kSoftcap>(r[u], 8, p.softcap, smoothing, m, s, zsum);
    }
  }
  if (full < vec && threadIdx.x == 0)
    accumulate<kSoftcap>(vecs[full], last, p.softcap, smoothing, m, s, zsum);
  block_reduce(m, s, zsum);
  const float lse = m + logf(s);
  const float zt =
      ignored || bad ? 0.f : capped(__bfloat162float(p.logits[row * p.ld + t]), p.softcap);
  float zl = 0;
  const float loss = row_loss(p, lse, zt, zsum, ignored, bad, zl);
  if (threadIdx.x == 0) {
    p.token_loss[row] = loss;
    p.token_zloss[row] = zl;
    p.lse[row] = lse;
  }
  if (!p.write_grad) return;
  __syncthreads();  // every thread has read logits[t] before any overwrites it
  const float scale = grad_scale(p, row, ignored, bad);
  if (scale == 0.f) {  // an ignored (or bad) token: a zero gradient, nothing to read
    for (int i = threadIdx.x; i < vec; i += kThreads) vecs[i] = make_uint4(0, 0, 0, 0);
    return;
  }
  const Grad grad(p, scale, lse, t, true);
  for (int base = threadIdx.x; base < full; base += kUnroll * kThreads) {
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * kThreads < full) r[u] = vecs[base + u * kThreads];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kThreads;
      if (i < full) vecs[i] = grad.of<kSoftcap>(r[u], i, 8);
    }
  }
  if (full < vec && threadIdx.x == 0) vecs[full] = grad.of<kSoftcap>(vecs[full], full, last);
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

__global__ void reduce_kernel(const float* v, int64_t n, const int* valid, bool divide,
                              float* out) {
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

// A block sums 256 columns (32 lanes x 8) over all rows: its 8 warps take every 8th row each,
// then warp 0 adds the 8 partial sums in a fixed order, so the result is deterministic.
constexpr int kSumWarps = 8;

__global__ void __launch_bounds__(kSumWarps * 32)
    column_sums_kernel(const uint4* g, int64_t vecs_per_row, int64_t rows, int64_t v,
                       const float* scale, bool accumulate, float* out) {
  __shared__ float part[kSumWarps][32][8];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t vec = blockIdx.x * 32LL + lane;
  float acc[8] = {};
  if (vec < vecs_per_row) {
    for (int64_t r = warp; r < rows; r += kSumWarps) {
      float z[8];
      unpack(g[r * vecs_per_row + vec], z);
      const float f = scale != nullptr ? scale[r] : 1.f;
#pragma unroll
      for (int k = 0; k < 8; ++k) acc[k] = fmaf(f, z[k], acc[k]);
    }
  }
#pragma unroll
  for (int k = 0; k < 8; ++k) part[warp][lane][k] = acc[k];
  __syncthreads();
  if (warp != 0 || vec >= vecs_per_row) return;
  for (int k = 0; k < 8; ++k) {
    const int64_t j = vec * 8 + k;
    if (j >= v) break;
    float sum = 0;
    for (int w = 0; w < kSumWarps; ++w) sum += part[w][lane][k];
    out[j] = accumulate ? out[j] + sum : sum;
  }
}

}  // namespace

void column_sums(const __nv_bfloat16* g, int64_t ld, int64_t rows, int64_t v, const float* scale,
                 bool accumulate, float* out, cudaStream_t stream) {
  if (ld % 8 != 0 || ld < v) throw invalid_input("column_sums: ld must be >= v, a multiple of 8");
  const int64_t vecs = ld / 8;
  const auto blocks = static_cast<unsigned>((vecs + 31) / 32);
  column_sums_kernel<<<blocks, kSumWarps * 32, 0, stream>>>(reinterpret_cast<const uint4*>(g), vecs,
                                                            rows, v, scale, accumulate, out);
  PS_LAUNCHED();
}

void cross_entropy(const CrossEntropyParams& p, int64_t rows, cudaStream_t stream) {
  if (rows == 0) return;
  if (p.softcap > 0) {
    ce_kernel<true><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(p);
  } else {
    ce_kernel<false><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(p);
  }
  PS_LAUNCHED();
}

void count_valid(const void* targets, bool int64, int64_t n, int64_t ignore_index, int* count,
                 cudaStream_t stream) {
  PS_CUDA(cudaMemsetAsync(count, 0, sizeof(int), stream));
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 1024));
  count_kernel<<<blocks, 256, 0, stream>>>(targets, int64, n, ignore_index, count);
  PS_LAUNCHED();
}

void reduce_sum(const float* values, int64_t n, const int* valid, bool divide_by_valid, float* out,
                cudaStream_t stream) {
  reduce_kernel<<<1, 1024, 0, stream>>>(values, n, valid, divide_by_valid, out);
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
