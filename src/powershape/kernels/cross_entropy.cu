#include "powershape/kernels/cross_entropy.cuh"

#include <cooperative_groups.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "powershape/kernels/ce_math.cuh"
#include "powershape/kernels/cuda_check.hpp"

namespace powershape::kernels {
namespace {

using namespace ce;
namespace cg = cooperative_groups;

constexpr int kThreads = 512;
constexpr int kUnroll = 4;  // 16-byte loads in flight per thread
constexpr int kMaxBlocksPerRow = 8;                 // the portable cluster size
constexpr int64_t kSegmentBytes = 64 << 10;         // the most a block takes of a row, where clusters exist

// Calls f(i, vector i) for the vectors below `full` that this thread takes, kUnroll loads in flight.
template <class F>
__device__ __forceinline__ void for_each_vector(const uint4* vecs, int full, F f) {
  for (int base = threadIdx.x; base < full; base += kUnroll * kThreads) {
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * kThreads < full) r[u] = vecs[base + u * kThreads];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (base + u * kThreads < full) f(base + u * kThreads, r[u]);
    }
  }
}

// What one block of a row's cluster publishes to the others.
struct Partial {
  float m, s, zsum;
};

__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// A row is taken by `blocks` blocks (1, or a cluster of up to 8), each one segment of `seg`
// vectors: two reads of the segment (the second from L2, which holds every resident block's
// segment when segments are small) and one write. The blocks of a row merge their partial (max,
// sum of exp) through distributed shared memory. Only a row's last vector can hold columns past V:
// the others take a path with no per-logit bounds checks, exponentials as one FFMA and one MUFU
// each, and the target looked for once a vector.
template <bool kSoftcap>
__global__ void __launch_bounds__(kThreads, kSoftcap ? 2 : 3) ce_kernel(CrossEntropyParams p, int blocks, int seg) {
  __shared__ Partial part;
  // The target is read after the first loop, to leave the registers to the loads (3 blocks an SM).
  const int64_t row = blockIdx.x / blocks;
  const int rank = static_cast<int>(blockIdx.x % blocks);  // the block's rank in its cluster
  const int vec = static_cast<int>(p.ld / 8);        // ld is a multiple of 8: rows are 16-byte aligned
  const int full = static_cast<int>(p.v / 8);        // vectors wholly inside the row's V logits
  const int v0 = rank * seg, nv = max(0, min(vec, v0 + seg) - v0);
  const int nfull = max(0, min(nv, full - v0));      // the segment's vectors wholly inside V
  uint4* vecs = reinterpret_cast<uint4*>(p.logits + row * p.ld) + v0;
  const bool smoothing = p.label_smoothing > 0;
  float m = -INFINITY, s = 0, zsum = 0;
  for_each_vector(vecs, nfull, [&](int, const uint4& v) { accumulate<kSoftcap>(v, 8, p.softcap, smoothing, m, s, zsum); });
  const bool partial = nfull < nv;  // the segment holds the row's partial vector
  const int last = static_cast<int>(p.v - static_cast<int64_t>(full) * 8);  // logits in the partial one
  if (partial && threadIdx.x == 0) accumulate<kSoftcap>(vecs[nfull], last, p.softcap, smoothing, m, s, zsum);
  block_reduce(m, s, zsum);
  const int64_t t = target_of(p.targets, p.targets_int64, row);
  const bool ignored = t == p.ignore_index;
  const bool bad = !ignored && (t < 0 || t >= p.v);  // an out-of-range target: NaN loss, no read
  // Read before the barrier below: no block overwrites logits[t] before every block has read it.
  const float zt = ignored || bad ? 0.f : capped(__bfloat162float(p.logits[row * p.ld + t]), p.softcap);
  if (blocks > 1) {
#if __CUDA_ARCH__ >= 900  // the host launches clusters only there
    if (threadIdx.x == 0) part = {m, s, zsum};
    cg::this_cluster().sync();
    // Each warp merges the cluster's partials: lane b reads block b's.
    const int lane = threadIdx.x % 32;
    Partial q{-INFINITY, 0, 0};
    if (lane < blocks) q = *cg::this_cluster().map_shared_rank(&part, lane);
    cluster_arrive();  // done with the peers' shared memory
    m = q.m;
    s = q.s;
    zsum = q.zsum;
    for (int o = 16; o > 0; o >>= 1) {
      const float m2 = __shfl_xor_sync(0xffffffff, m, o), s2 = __shfl_xor_sync(0xffffffff, s, o);
      merge(m, s, m2, s2);
      zsum += __shfl_xor_sync(0xffffffff, zsum, o);
    }
#endif
  } else {
    __syncthreads();
  }
  const float lse = m + logf(s);
  float zl = 0;
  const float loss = row_loss(p, lse, zt, zsum, ignored, bad, zl);
  if (rank == 0 && threadIdx.x == 0) {
    p.token_loss[row] = loss;
    p.token_zloss[row] = zl;
    p.lse[row] = lse;
  }
  const float scale = grad_scale(p, ignored, bad);
  if (p.write_grad && scale == 0.f) {  // an ignored (or bad) token: a zero gradient, nothing to read
    for (int i = threadIdx.x; i < nv; i += kThreads) vecs[i] = make_uint4(0, 0, 0, 0);
  } else if (p.write_grad) {
    const Grad grad(p, scale, lse, t, v0);
    if (partial && threadIdx.x == 0) vecs[nfull] = grad.of<kSoftcap>(vecs[nfull], nfull, last);
    for_each_vector(vecs, nfull, [&](int i, const uint4& v) { vecs[i] = grad.of<kSoftcap>(v, i, 8); });
  }
#if __CUDA_ARCH__ >= 900
  if (blocks > 1) cluster_wait();  // no block leaves while a peer may still read its partial
#endif
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

bool hopper_or_later() {
  static const bool yes = [] {
    int dev = 0, major = 0;
    PS_CUDA(cudaGetDevice(&dev));
    PS_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    return major >= 9;
  }();
  return yes;
}

template <bool kSoftcap>
void launch(const CrossEntropyParams& p, int64_t rows, int blocks, int seg, cudaStream_t stream) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(rows * blocks));
  cfg.blockDim = dim3(kThreads);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = static_cast<unsigned>(blocks);
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = blocks > 1 ? 1 : 0;
  PS_CUDA(cudaLaunchKernelEx(&cfg, ce_kernel<kSoftcap>, p, blocks, seg));
}

}  // namespace

int cross_entropy_blocks_per_row(int64_t ld) {
  if (!hopper_or_later()) return 1;
  return static_cast<int>(std::clamp<int64_t>((ld * 2 + kSegmentBytes - 1) / kSegmentBytes, 1, kMaxBlocksPerRow));
}

void cross_entropy(const CrossEntropyParams& p, int64_t rows, cudaStream_t stream, int blocks_per_row) {
  if (blocks_per_row < 0 || blocks_per_row > kMaxBlocksPerRow) {
    throw std::invalid_argument("cross_entropy: blocks_per_row must be 0 (chosen) to 8, not " + std::to_string(blocks_per_row));
  }
  if (blocks_per_row > 1 && !hopper_or_later()) {
    throw std::invalid_argument("cross_entropy: more than one block a row needs thread block clusters (compute capability 9.0)");
  }
  if (rows == 0) return;
  const int blocks = blocks_per_row > 0 ? blocks_per_row : cross_entropy_blocks_per_row(p.ld);
  const int seg = static_cast<int>((p.ld / 8 + blocks - 1) / blocks);
  if (p.softcap > 0) {
    launch<true>(p, rows, blocks, seg, stream);
  } else {
    launch<false>(p, rows, blocks, seg, stream);
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
