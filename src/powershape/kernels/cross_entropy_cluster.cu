// The one-read cross-entropy pass: a cluster of blocks a row, each block one segment of it kept in
// shared memory between the passes, partials merged through distributed shared memory.
#include <cooperative_groups.h>

#include <algorithm>

#include "powershape/kernels/ce_math.cuh"
#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/kernels/cuda_check.hpp"

namespace powershape::kernels {
namespace {

using namespace ce;
namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr int64_t kSegmentBytes = 48 << 10;  // several blocks share a multiprocessor

// What one block of a row's cluster publishes to the others.
struct Partial {
  float m, s, zsum, zt;
};

// The first pass streams the block's segment from memory once into shared memory (its first
// `cached` vectors: all of it unless a row is over ~1.6 M logits) and reduces it; the second pass
// reads it back from there and writes the gradient over the logits.
template <bool kSoftcap>
__global__ void __launch_bounds__(kThreads) ce_cluster_kernel(CrossEntropyParams p, int seg_vecs, int cached) {
  extern __shared__ uint4 cache[];
  __shared__ Partial part;
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank()), blocks = static_cast<int>(cluster.num_blocks());
  const int64_t row = blockIdx.x / blocks;
  const int vec = static_cast<int>(p.ld / 8), full = static_cast<int>(p.v / 8);
  const int last = static_cast<int>(p.v - static_cast<int64_t>(full) * 8);
  const int v0 = rank * seg_vecs, nv = max(0, min(vec, v0 + seg_vecs) - v0);
  uint4* seg = reinterpret_cast<uint4*>(p.logits + row * p.ld) + v0;
  const int64_t t = target_of(p.targets, p.targets_int64, row);
  const bool ignored = t == p.ignore_index;
  const bool bad = !ignored && (t < 0 || t >= p.v);
  const int owner = ignored || bad ? 0 : static_cast<int>(t / 8 / seg_vecs);  // whose segment holds t
  const bool smoothing = p.label_smoothing > 0;
  float m = -INFINITY, s = 0, zsum = 0;
  for (int base = threadIdx.x; base < nv; base += kUnroll * kThreads) {
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kThreads;
      if (i < nv) r[u] = i < cached ? __ldcs(seg + i) : seg[i];  // the cached part is not read again
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int i = base + u * kThreads;
      if (i >= nv) break;
      if (i < cached) cache[i] = r[u];
      accumulate<kSoftcap>(r[u], v0 + i < full ? 8 : last, p.softcap, smoothing, m, s, zsum);
    }
  }
  block_reduce(m, s, zsum);  // ends with a barrier: the cache is complete
  if (threadIdx.x == 0) {
    float zt = 0;
    if (!ignored && !bad && rank == owner) {
      const int i = static_cast<int>(t / 8) - v0;
      const uint4 raw = i < cached ? cache[i] : seg[i];
      zt = capped(__bfloat162float(reinterpret_cast<const __nv_bfloat16*>(&raw)[t % 8]), p.softcap);
    }
    part = {m, s, zsum, zt};
  }
  cluster.sync();
  float zt = 0;
  m = -INFINITY;
  s = zsum = 0;
  for (int b = 0; b < blocks; ++b) {
    const Partial q = *cluster.map_shared_rank(&part, b);
    merge(m, s, q.m, q.s);
    zsum += q.zsum;
    if (b == owner) zt = q.zt;
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
  if (p.write_grad && scale == 0.f) {
    for (int i = threadIdx.x; i < nv; i += kThreads) seg[i] = make_uint4(0, 0, 0, 0);
  } else if (p.write_grad) {
    const Grad grad(p, scale, lse, t, true);
    for (int i = threadIdx.x; i < nv; i += kThreads) {
      const uint4 raw = i < cached ? cache[i] : seg[i];
      seg[i] = grad.of<kSoftcap>(raw, v0 + i, v0 + i < full ? 8 : last);
    }
  }
  cluster.sync();  // no block leaves while another may still read its partial
}

template <bool kSoftcap>
void launch(const CrossEntropyParams& p, int64_t rows, cudaStream_t stream) {
  static const int max_smem = [] {
    int dev = 0, optin = 0;
    PS_CUDA(cudaGetDevice(&dev));
    PS_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    cudaFuncAttributes fa{};
    PS_CUDA(cudaFuncGetAttributes(&fa, ce_cluster_kernel<kSoftcap>));
    const int dynamic = optin - static_cast<int>(fa.sharedSizeBytes);
    PS_CUDA(cudaFuncSetAttribute(ce_cluster_kernel<kSoftcap>, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic));
    return dynamic;
  }();
  // The fewest blocks a row (1, 2, 4 or 8: a portable cluster) whose segments fit kSegmentBytes.
  const int64_t vec = p.ld / 8;
  int blocks = 1;
  while (blocks < 8 && (vec + blocks - 1) / blocks * static_cast<int64_t>(sizeof(uint4)) > kSegmentBytes) blocks *= 2;
  const int seg_vecs = static_cast<int>((vec + blocks - 1) / blocks);
  const int cached = std::min(seg_vecs, max_smem / static_cast<int>(sizeof(uint4)));
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(rows * blocks));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = static_cast<std::size_t>(cached) * sizeof(uint4);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = static_cast<unsigned>(blocks);
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  PS_CUDA(cudaLaunchKernelEx(&cfg, ce_cluster_kernel<kSoftcap>, p, seg_vecs, cached));
}

}  // namespace

void cross_entropy_cluster(const CrossEntropyParams& p, int64_t rows, cudaStream_t stream) {
  if (rows == 0) return;
  if (p.softcap > 0) {
    launch<true>(p, rows, stream);
  } else {
    launch<false>(p, rows, stream);
  }
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
