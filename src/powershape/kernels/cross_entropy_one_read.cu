// The one-read cross-entropy pass: each logit read from memory once. A cluster of blocks holds a
// row, each block one segment of it in shared memory, brought in by the Tensor Memory Accelerator
// (one bulk copy a segment, `stages` rows in flight); the blocks merge their partial (max, sum of
// exp) through distributed shared memory and write the gradient from shared memory. Persistent:
// each cluster walks rows cluster, cluster + clusters, ...
#include <cooperative_groups.h>

#include <algorithm>
#include <stdexcept>

#include "powershape/kernels/ce_math.cuh"
#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/kernels/cuda_check.hpp"

namespace powershape::kernels {
namespace {

using namespace ce;
namespace cg = cooperative_groups;

constexpr int kThreads = 512;
constexpr int kMaxStages = 4;
constexpr int kMaxCluster = 8;  // the portable cluster size

// What one block of a row's cluster publishes to the others.
struct Partial {
  float m, s, zsum, zt;
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bar_init(uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
}

// One thread: `bytes` from global `src` into shared `dst`, completing on `bar`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

__device__ __forceinline__ void bar_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

template <bool kSoftcap, int kPerSm>
__global__ void __launch_bounds__(kThreads, kPerSm)
    ce_one_read_kernel(CrossEntropyParams p, int64_t rows, int seg_vecs, int stages) {
#if __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) uint4 buf[];  // [stages][seg_vecs]
  __shared__ __align__(8) uint64_t loaded[kMaxStages];
  __shared__ Partial part[2];  // by iteration parity: a peer may still read the last one
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank()), blocks = static_cast<int>(cluster.num_blocks());
  const int64_t clusters = gridDim.x / blocks;
  const int vec = static_cast<int>(p.ld / 8), full = static_cast<int>(p.v / 8);
  const int last = static_cast<int>(p.v - static_cast<int64_t>(full) * 8);
  const int v0 = rank * seg_vecs, nv = max(0, min(vec, v0 + seg_vecs) - v0);
  // The segment's vectors wholly inside V take a path with no bounds checks; a row's last, partial
  // vector (if this segment holds it) is taken apart.
  const int nfull = max(0, min(nv, full - v0));
  const bool partial = nfull < nv;
  const bool smoothing = p.label_smoothing > 0;
  auto segment = [&](int64_t row) { return reinterpret_cast<uint4*>(p.logits + row * p.ld) + v0; };
  auto fetch = [&](int64_t row, int stage) {
    if (nv > 0 && row < rows) bulk_load(buf + stage * seg_vecs, segment(row), nv * 16u, &loaded[stage]);
  };
  if (threadIdx.x == 0) {
    for (int st = 0; st < stages; ++st) bar_init(&loaded[st]);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int st = 0; st < stages; ++st) fetch(blockIdx.x / blocks + st * clusters, st);
  }
  __syncthreads();
  int it = 0;
  for (int64_t row = blockIdx.x / blocks; row < rows; row += clusters, ++it) {
    const int st = it % stages;
    const uint4* cache = buf + st * seg_vecs;
    if (nv > 0) bar_wait(&loaded[st], static_cast<uint32_t>(it / stages) & 1u);
    const int64_t t = target_of(p.targets, p.targets_int64, row);
    const bool ignored = t == p.ignore_index;
    const bool bad = !ignored && (t < 0 || t >= p.v);
    const int owner = ignored || bad ? -1 : static_cast<int>(t) / 8 / seg_vecs;  // whose segment holds t
    float m = -INFINITY, s = 0, zsum = 0;
    for (int i = threadIdx.x; i < nfull; i += kThreads) accumulate<kSoftcap>(cache[i], 8, p.softcap, smoothing, m, s, zsum);
    if (partial && threadIdx.x == 0) accumulate<kSoftcap>(cache[nfull], last, p.softcap, smoothing, m, s, zsum);
    block_reduce(m, s, zsum);
    if (threadIdx.x == 0) {
      const float zt = rank == owner ? capped(__bfloat162float(reinterpret_cast<const __nv_bfloat16*>(cache)[t - v0 * 8]), p.softcap) : 0.f;
      part[it & 1] = {m, s, zsum, zt};
    }
    cluster.sync();
    // Each warp merges the cluster's partials: lane b reads block b's.
    const int lane = threadIdx.x % 32;
    Partial q{-INFINITY, 0, 0, 0};
    if (lane < blocks) q = *cluster.map_shared_rank(&part[it & 1], lane);
    float zt = lane == owner ? q.zt : 0.f;
    m = q.m;
    s = q.s;
    zsum = q.zsum;
    for (int o = 16; o > 0; o >>= 1) {
      const float m2 = __shfl_xor_sync(0xffffffff, m, o), s2 = __shfl_xor_sync(0xffffffff, s, o);
      merge(m, s, m2, s2);
      zsum += __shfl_xor_sync(0xffffffff, zsum, o);
      zt += __shfl_xor_sync(0xffffffff, zt, o);
    }
    const float lse = m + logf(s);
    float zl = 0;
    const float loss = row_loss(p, lse, zt, zsum, ignored, bad, zl);
    if (rank == 0 && threadIdx.x == 0) {
      p.token_loss[row] = loss;
      p.token_zloss[row] = zl;
      p.lse[row] = lse;
    }
    if (p.write_grad) {
      uint4* out = segment(row);
      const float scale = grad_scale(p, ignored, bad);
      if (scale == 0.f) {
        for (int i = threadIdx.x; i < nv; i += kThreads) out[i] = make_uint4(0, 0, 0, 0);
      } else {
        const Grad grad(p, scale, lse, t, true);
        for (int i = threadIdx.x; i < nfull; i += kThreads) out[i] = grad.of<kSoftcap>(cache[i], v0 + i, 8);
        if (partial && threadIdx.x == 0) out[nfull] = grad.of<kSoftcap>(cache[nfull], full, last);
      }
    }
    __syncthreads();  // the stage is read: it may take the row `stages` ahead
    if (threadIdx.x == 0) {
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      fetch(row + stages * clusters, st);
    }
  }
  cluster.sync();  // no block leaves while a peer may still read its partial
#else
  __trap();
#endif
}

struct Config {
  int cluster, seg_vecs, smem;
};

// The dynamic shared memory a block may have with per_sm blocks a multiprocessor.
int max_dynamic_smem(int per_sm) {
  static const int bytes = [] {
    int dev = 0, optin = 0;
    PS_CUDA(cudaGetDevice(&dev));
    PS_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    return optin;
  }();
  return (bytes + 1024) / per_sm - 1024 - 1024;  // less the driver's 1 KB a block and the static part
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

template <bool kSoftcap, int kPerSm>
void launch(const CrossEntropyParams& p, int64_t rows, const Config& c, int stages, cudaStream_t stream) {
  auto* kernel = ce_one_read_kernel<kSoftcap, kPerSm>;
  static const bool sized = [&] {
    PS_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dynamic_smem(kPerSm)));
    return true;
  }();
  (void)sized;
  cudaLaunchConfig_t cfg{};
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = static_cast<std::size_t>(c.smem);
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = static_cast<unsigned>(c.cluster);
  attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  cfg.gridDim = dim3(static_cast<unsigned>(c.cluster));
  int active = 0;
  PS_CUDA(cudaOccupancyMaxActiveClusters(&active, kernel, &cfg));
  const int64_t clusters = std::min<int64_t>(std::max(active, 1), rows);
  cfg.gridDim = dim3(static_cast<unsigned>(clusters * c.cluster));
  PS_CUDA(cudaLaunchKernelEx(&cfg, kernel, p, rows, c.seg_vecs, stages));
}

}  // namespace

bool cross_entropy_one_read(const CrossEntropyParams& p, int64_t rows, cudaStream_t stream, int stages,
                            int min_cluster, int per_sm) {
  if (stages < 1 || stages > kMaxStages || min_cluster < 1 || min_cluster > kMaxCluster || per_sm < 1 || per_sm > 2) {
    throw std::invalid_argument("cross_entropy_one_read: stages must be 1-4, min_cluster 1-8 and per_sm 1-2");
  }
  if (!hopper_or_later()) return false;
  // The fewest blocks a row whose segments, `stages` of them, fit in shared memory.
  const int64_t vec = p.ld / 8;
  for (int cluster = min_cluster; cluster <= kMaxCluster; ++cluster) {
    const int64_t seg = (vec + cluster - 1) / cluster;
    if (seg * 16 * stages > max_dynamic_smem(per_sm)) continue;
    if (rows == 0) return true;
    const Config c{cluster, static_cast<int>(seg), static_cast<int>(seg * 16 * stages)};
    if (per_sm == 2) {
      p.softcap > 0 ? launch<true, 2>(p, rows, c, stages, stream) : launch<false, 2>(p, rows, c, stages, stream);
    } else {
      p.softcap > 0 ? launch<true, 1>(p, rows, c, stages, stream) : launch<false, 1>(p, rows, c, stages, stream);
    }
    PS_LAUNCHED();
    return true;
  }
  return false;
}

}  // namespace powershape::kernels
