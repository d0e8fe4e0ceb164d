// logits_exp.cuh's product (its finishing kernel: logits_exp_finish.cu). It is a persistent,
// warp-specialised Hopper kernel, a block a multiprocessor, 128 x 256 tiles of the logits, three
// roles:
// - one thread feeds X's and W's tiles, 64 deep in K (128-byte rows, swizzled), through the
//   tensor copy engine into three shared-memory stages of 48 KB;
// - two warpgroups multiply (each 64 rows x 256 columns, one wgmma m64n256k16 a 16-deep step,
//   fp32 accumulators), then, from their own registers, add the bias, find each row's maximum and
//   with it the row's offset, and stage the tile as bf16 (stmatrix, 64 KB);
// - three warps take exp(z - c) of the staged tile and write it, while the two warpgroups
//   multiply the next tile.
// Without epilogue work the product runs as fast as cuBLASLt's for the same shape (bench/
// logits_exp_speed; 128 x 256 x 64 tiles too); the exponent costs product time only where a
// tile's epilogue outlasts its products (small D). Sharing W's tile between two blocks of a
// cluster (multicast) was slower in every measurement and is not used.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "powershape/kernels/ce_math.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/logits_exp.cuh"
#include "powershape/kernels/logits_exp_scratch.cuh"
#include "powershape/kernels/sm90.cuh"

namespace powershape::kernels {
namespace {

using namespace logits_exp_detail;

constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 3, kThreads = 384;
constexpr int kEpilogueWarps = 3;  // the first warpgroup's warps 1-3 (warp 0 feeds the stages)
static_assert(kBN == workload::kLmHeadExpTile, "the plans count a pair per tile");
constexpr uint32_t kStageA = kBM * kBK * 2, kStageB = kBN * kBK * 2;
constexpr int kPieceCols = 64;                            // a staged piece of a tile: 128-byte rows
constexpr uint32_t kPiece = kBM * kPieceCols * 2;         // 16 KB
constexpr uint32_t kStaging = kBN / kPieceCols * kPiece;  // the whole tile as bf16: 64 KB
constexpr int kSmemBytes =
    1024 + kStages * (kStageA + kStageB) + kStaging + 4 * kBM + 8 * (2 * kStages + 2);
constexpr float kRaise = 30.f;  // exp(z - c) stays below e^30 (bf16 and fp32: e^88)

// The tiles a block takes, in order: row blocks first (the blocks running at once share W's tiles
// in L2, and the chunk's X stays there).
struct Walk {
  int m_tiles, tiles;
  __device__ int first() const { return static_cast<int>(blockIdx.x); }
  __device__ int stride() const { return static_cast<int>(gridDim.x); }
  __device__ int m(int t) const { return t % m_tiles; }
  __device__ int n(int t) const { return t / m_tiles; }
  __device__ int n_tiles() const { return tiles / m_tiles; }  // a row's tiles
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The offset this tile uses for a row whose maximum is m, given the row's offset as this tile last
// read it (`seen`): set it if no tile has, raise it if m lies more than kRaise above it.
__device__ __forceinline__ float resolve_offset(uint32_t* slot, float m, uint32_t seen) {
  uint32_t cur = seen;
  if (cur == kUnset) {
    cur = atomicCAS(slot, kUnset, __float_as_uint(m));
    if (cur == kUnset) return m;
  }
  while (m > __uint_as_float(cur) + kRaise) {
    const uint32_t prev = atomicCAS(slot, cur, __float_as_uint(m));
    if (prev == cur) return m;
    cur = prev;
  }
  return __uint_as_float(cur);
}

// Where 16-byte unit `unit` (8 logits) of staged row `row` lies: the tile is staged as four
// 64-column pieces of 128-byte rows, each 16-byte unit swizzled by the row (as TMA's 128-byte
// swizzle lays them), so that stmatrix's eight rows and a warp's reads of a row hit every bank.
__device__ __forceinline__ uint32_t staged_at(uint32_t staging, int row, int unit) {
  return staging +
         static_cast<uint32_t>((unit / 8) * kPiece + row * 128 + (((unit % 8) ^ (row % 8)) * 16));
}

// Max over the four lanes that share a row.
__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}

// The multiplying warpgroup `half` (0, 1): rows 64 half to 64 half + 63 of each tile, all 256
// columns, from the stages into fp32 accumulators; then, from its own registers (cheap: a
// maximum a row), the bias added, -inf past V, and each row's offset for
// the tile, which it leaves in `offsets` beside the tile staged as bf16 for the epilogue warps
// (which soft-cap each logit: the cap keeps the order, so the maximum is the capped raw one's).
// Thread l of warp w holds rows 16 w + l / 4 (h = 0) and 8 below (h = 1): d[4 j + 2 h] and
// d[4 j + 2 h + 1] at columns 8 j + 2 (l % 4) and + 1.
template <bool kBias>
__device__ __forceinline__ void multiply(const LogitsExpParams& p, Scratch s, uint32_t a0,
                                         uint32_t b0, uint32_t staging, uint32_t offsets, int half,
                                         uint32_t full, uint32_t empty, uint32_t staged,
                                         uint32_t freed, Walk walk, int k_blocks) {
  const int lane = static_cast<int>(threadIdx.x % 32),
            warp = static_cast<int>(threadIdx.x % 128) / 32, q = lane % 4;
  int stage = 0;
  uint32_t phase = 0, freed_parity = 1;  // the staging buffer starts free
  float d[128];
  // A stage is free again once every multiplying warp is done with it.
  auto release = [&](int st) {
    if (lane == 0) sm90::bar_arrive(empty + 8 * st);
  };
  // stmatrix: lanes 8 g to 8 g + 7 give the rows of matrix g, the upper (g even) or lower 8 rows
  // of the warp's 16, in 8-column group 2 u + g / 2 of a piece.
  const int g = lane / 8, srow = half * 64 + warp * 16 + 8 * (g % 2) + lane % 8;
  const int trow = half * 64 + warp * 16 + lane / 4;  // this thread's upper row in the tile
  for (int t = walk.first(); t < walk.tiles; t += walk.stride()) {
    const int m = walk.m(t), n = walk.n(t);
    // The rows' offsets as they stand, read before the products.
    int64_t row[2];
    uint32_t seen[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      row[h] = static_cast<int64_t>(m) * kBM + trow + 8 * h;
      seen[h] = kUnset;
      if (row[h] < p.rows) seen[h] = *static_cast<volatile uint32_t*>(s.offset + row[h]);
    }
    int prev = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
      sm90::bar_wait(full + 8 * stage, phase);
      sm90::pin(d);
      sm90::wgmma_fence();
#pragma unroll
      for (int k = 0; k < kBK / 16; ++k) {
        const uint32_t a = a0 + stage * kStageA + half * 64 * 128 + k * 32;  // 128-byte rows
        const uint32_t b = b0 + stage * kStageB + k * 32;
        sm90::wgmma_m64n256(d, sm90::desc_k128(a), sm90::desc_k128(b), kb > 0 || k > 0);
      }
      sm90::wgmma_commit();
      if (kb > 0) {
        sm90::wgmma_wait<1>();
        release(prev);
      }
      prev = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    sm90::wgmma_wait<0>();
    sm90::pin(d);
    release(prev);
    const int64_t col = static_cast<int64_t>(n) * kBN + 2 * q;  // this thread's first column
    if (kBias) {  // rare (no current LM head has one): its loads spill some accumulators
#pragma unroll
      for (int j = 0; j < 32; ++j) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          const float b = col + 8 * j + k < p.v ? __bfloat162float(p.bias[col + 8 * j + k]) : 0.f;
          d[4 * j + k] += b;
          d[4 * j + 2 + k] += b;
        }
      }
    }
    if (static_cast<int64_t>(n + 1) * kBN > p.v) {  // the row's last tile: nothing past V
#pragma unroll
      for (int j = 0; j < 32; ++j) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          if (col + 8 * j + k >= p.v) {
            d[4 * j + k] = -INFINITY;
            d[4 * j + 2 + k] = -INFINITY;
          }
        }
      }
    }
    float c[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < 32; ++j) mx = fmaxf(mx, fmaxf(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]));
      // As staged (bf16: the soft-cap and the rounding keep the order), and never below -1e30: a
      // tile whose every logit is -inf (a bias that masks its columns) must not give the row an
      // offset of -inf (exp(-inf - -inf) is NaN), nor one whose product with log2(e) overflows.
      mx = ce::capped(__bfloat162float(__float2bfloat16(fmaxf(quad_max(mx), -1e30f))), p.softcap);
      c[h] = __uint_as_float(seen[h]);
      if (row[h] < p.rows && (seen[h] == kUnset || mx > c[h] + kRaise) && q == 0)
        c[h] = resolve_offset(s.offset + row[h], mx, seen[h]);  // the quad agrees on the test
      c[h] = __shfl_sync(0xffffffffu, c[h], lane & ~3);
    }
    sm90::bar_wait(freed, freed_parity);  // the epilogue has read the last tile out
    freed_parity ^= 1;
    if (q == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        asm volatile("st.shared.f32 [%0], %1;" ::"r"(offsets + 4 * (trow + 8 * h)), "f"(c[h])
                     : "memory");
      }
    }
#pragma unroll
    for (int piece = 0; piece < kBN / kPieceCols; ++piece) {
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int j = 8 * piece + 2 * u;  // the pair of 8-column groups
        sm90::stmatrix_x4(staged_at(staging, srow, 8 * piece + 2 * u + g / 2),
                          ce::pack(d[4 * j], d[4 * j + 1]), ce::pack(d[4 * j + 2], d[4 * j + 3]),
                          ce::pack(d[4 * j + 4], d[4 * j + 5]),
                          ce::pack(d[4 * j + 6], d[4 * j + 7]));
      }
    }
    sm90::bar_arrive(staged);
  }
}

__device__ __forceinline__ void row_sum8(float (&v)[2]) {
#pragma unroll
  for (int o = 1; o < 8; o <<= 1) {
#pragma unroll
    for (int h = 0; h < 2; ++h) v[h] += __shfl_xor_sync(0xffffffffu, v[h], o);
  }
}

// The epilogue's warps (kEpilogueWarps, `e` of them this one): for each staged tile, eight rows a
// pass (passes e, e + kEpilogueWarps, ...), eight lanes a row and two rows a lane (rows lane / 8
// and 4 below), each lane four 8-column units of a row, one in each piece (so that each store
// instruction writes 128 bytes of a row side by side): exp(z - c) written with 16-byte stores
// (z = -inf past V gives 0), the row's (offset, sum) and its target's logit. Only the exponent is
// left here; the rest of a row's work is done where the accumulators are.
template <bool kCap>
__device__ __forceinline__ void exponentiate(const LogitsExpParams& p,
                                             const CrossEntropyParams& pass, Scratch s,
                                             uint32_t staging, uint32_t offsets, uint32_t staged,
                                             uint32_t freed, Walk walk, int e) {
  using namespace ce;
  constexpr int kPasses = kBM / 8;
  const int lane = static_cast<int>(threadIdx.x % 32), rg = lane / 8, l8 = lane % 8;
  const float cap = p.softcap;
  uint32_t staged_parity = 0;
  for (int t = walk.first(); t < walk.tiles; t += walk.stride()) {
    const int m = walk.m(t), n = walk.n(t);
    const int64_t row0 = static_cast<int64_t>(m) * kBM, colbase = static_cast<int64_t>(n) * kBN;
    // The targets of this warp's rows, read before the tile is staged: the row `sub` (0-7) of
    // this warp's `rank`-th pass is slot 8 rank + sub, lane slot's [0] or lane slot - 32's [1].
    int64_t target[2] = {-1, -1};
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int slot = lane + 32 * k, ps = e + kEpilogueWarps * (slot / 8);
      const int64_t row = row0 + 8 * ps + slot % 8;
      if (ps < kPasses && row < p.rows)
        target[k] = target_of(pass.targets, pass.targets_int64, row);
    }
    sm90::bar_wait(staged, staged_parity);
    staged_parity ^= 1;
#pragma unroll 1
    for (int ps = e, rank = 0; ps < kPasses; ps += kEpilogueWarps, ++rank) {
      float z[2][4][8], c[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = 8 * ps + rg + 4 * h;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          uint4 raw;
          asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                       : "=r"(raw.x), "=r"(raw.y), "=r"(raw.z), "=r"(raw.w)
                       : "r"(staged_at(staging, r, l8 + 8 * i)));
          unpack(raw, z[h][i]);
          if (kCap) {  // columns past V stay -inf (e = 0); a -inf bias caps to -cap, as in the pass
#pragma unroll
            for (int k = 0; k < 8; ++k) {
              const bool past = colbase + 8 * (l8 + 8 * i) + k >= p.v;
              z[h][i][k] = past ? -INFINITY : cap * tanhf(z[h][i][k] / cap);
            }
          }
        }
        asm volatile("ld.shared.f32 %0, [%1];" : "=f"(c[h]) : "r"(offsets + 4 * r));
      }
      if (ps + kEpilogueWarps >= kPasses) sm90::bar_arrive(freed);  // its last rows are read
      float sum[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int sub = rg + 4 * h, slot = 8 * rank + sub;  // slot / 32 is the same in the warp
        const int64_t tgt = __shfl_sync(0xffffffffu, slot < 32 ? target[0] : target[1], slot % 32);
        const int64_t row = row0 + 8 * ps + sub;
        const bool valid = row < p.rows;
        // The target, if it lies among this lane's columns (rare: one lane of one tile a row).
        const int64_t to = tgt - colbase;
        if (valid && to >= 0 && to < kBN && (to / 8) % 8 == l8) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
#pragma unroll
            for (int k = 0; k < 8; ++k) {
              if (to == 8 * (l8 + 8 * i) + k) s.target_logit[row] = z[h][i][k];
            }
          }
        }
        const float cl = c[h] * kLog2e;
        float part[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          float g8[8];
          part[i] = 0;
#pragma unroll
          for (int k = 0; k < 8; ++k) {
            const float ex = ex2(fmaf(z[h][i][k], kLog2e, -cl));
            part[i] += ex;
            if (kCap) {
              const float u = z[h][i][k] / cap;
              g8[k] = ex != 0.f ? ex * (1 - u * u) : 0.f;  // columns past V: z = -inf, e = 0
            } else {
              g8[k] = ex;
            }
          }
          const int64_t col = colbase + 8 * (l8 + 8 * i);
          if (p.write && valid && col < p.ld) {
            *reinterpret_cast<uint4*>(p.out + row * p.ld + col) = make_uint4(
                pack(g8[0], g8[1]), pack(g8[2], g8[3]), pack(g8[4], g8[5]), pack(g8[6], g8[7]));
          }
        }
        sum[h] = (part[0] + part[1]) + (part[2] + part[3]);
      }
      row_sum8(sum);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int64_t row = row0 + 8 * ps + rg + 4 * h;
        if (row < p.rows && l8 == 0) s.tiles[row * walk.n_tiles() + n] = make_float2(c[h], sum[h]);
      }
    }
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <bool kCap, bool kBias>
__global__ void __launch_bounds__(kThreads, 1)
    logits_exp_kernel(const __grid_constant__ CUtensorMap tx,
                      const __grid_constant__ CUtensorMap tw, const LogitsExpParams p,
                      const CrossEntropyParams pass, Scratch s, Walk walk, int k_blocks) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_raw[];
  auto* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) /
                                                1024 * 1024);  // the 128-byte swizzle's atom
  const uint32_t a0 = sm90::smem_addr(smem), b0 = a0 + kStages * kStageA;
  const uint32_t staging = b0 + kStages * kStageB;
  const uint32_t offsets = staging + kStaging;  // each staged row's offset
  const uint32_t full = offsets + 4 * kBM, empty = full + 8 * kStages, staged = empty + 8 * kStages,
                 freed = staged + 8;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      sm90::bar_init(full + 8 * i, 1);
      sm90::bar_init(empty + 8 * i, 8);  // each multiplying warp
    }
    sm90::bar_init(staged, 256);                 // each multiplying thread
    sm90::bar_init(freed, 32 * kEpilogueWarps);  // each epilogue thread
    sm90::bar_init_fence();
  }
  __syncthreads();
  // Every thread keeps the registers it starts with (168): the products' 128 accumulators and
  // their descriptors need more than 512 threads would leave (128), so the epilogue shares the
  // first warpgroup with the producer.
  const int warp = static_cast<int>(threadIdx.x / 32);
  if (warp == 0) {
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int t = walk.first(); t < walk.tiles; t += walk.stride()) {
        const int m = walk.m(t), n = walk.n(t);
        for (int kb = 0; kb < k_blocks; ++kb) {
          sm90::bar_wait(empty + 8 * stage, phase ^ 1);
          sm90::bar_expect(full + 8 * stage, kStageA + kStageB);
          sm90::tma_load(a0 + stage * kStageA, &tx, kb * kBK, m * kBM, full + 8 * stage);
          sm90::tma_load(b0 + stage * kStageB, &tw, kb * kBK, n * kBN, full + 8 * stage);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else if (warp < 4) {
    exponentiate<kCap>(p, pass, s, staging, offsets, staged, freed, walk, warp - 1);
  } else {
    multiply<kBias>(p, s, a0, b0, staging, offsets, warp / 4 - 1, full, empty, staged, freed, walk,
                    k_blocks);
  }
#endif
}

using EncodeFn = PFN_cuTensorMapEncodeTiled_v12000;

EncodeFn encoder() {
  static EncodeFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    PS_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                             &q));
    if (f == nullptr || q != cudaDriverEntryPointSuccess)
      throw unsupported("logits_exp: the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<EncodeFn>(f);
  }();
  return fn;
}

// A [rows x cols] row-major bf16 matrix read in boxes of kBK columns (128 bytes) x box_rows rows,
// 128-byte swizzled (what the products' descriptors expect); out-of-range elements read as zeros.
CUtensorMap tensor_map(const void* base, int64_t rows, int64_t cols, int box_rows) {
  CUtensorMap m{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {kBK, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r =
      encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides,
                box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw device_error("logits_exp: cuTensorMapEncodeTiled failed (" + std::to_string(r) + ")");
  return m;
}

using KernelFn = void (*)(CUtensorMap, CUtensorMap, LogitsExpParams, CrossEntropyParams, Scratch,
                          Walk, int);

KernelFn kernel_for(bool cap, bool bias) {
  if (cap) return bias ? logits_exp_kernel<true, true> : logits_exp_kernel<true, false>;
  return bias ? logits_exp_kernel<false, true> : logits_exp_kernel<false, false>;
}

struct DeviceInfo {
  bool available = false;
  int blocks = 0;  // blocks that fit on the GPU at once (one a multiprocessor)
};

// Per device, once: whether the kernel has an image for it, and how many blocks fit at once.
const DeviceInfo& device_info() {
  static std::mutex mu;
  static std::map<int, DeviceInfo> known;
  int dev = 0;
  PS_CUDA(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  auto it = known.find(dev);
  if (it != known.end()) return it->second;
  DeviceInfo info;
  int major = 0, minor = 0;
  PS_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  PS_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  // This file is built for sm_90a alone: on an sm_90 GPU the kernel has an image, elsewhere none.
  // Nothing is launched or allocated here (a first call may come inside a CUDA graph capture).
  cudaFuncAttributes attr{};
  if (major == 9 && minor == 0) {
    if (cudaFuncGetAttributes(&attr, kernel_for(false, false)) != cudaSuccess) {
      cudaGetLastError();  // the error just made: a missing image is an answer
    } else {
      for (bool cap : {false, true}) {
        for (bool bias : {false, true}) {
          PS_CUDA(cudaFuncSetAttribute(kernel_for(cap, bias),
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
        }
      }
      int per_sm = 0, sms = 0;
      PS_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_for(false, false),
                                                            kThreads, kSmemBytes));
      PS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      info.blocks = per_sm * sms;
      info.available = info.blocks > 0;
    }
  }
  return known.emplace(dev, info).first->second;
}

}  // namespace

bool logits_exp_available() { return device_info().available; }

void logits_exp(const LogitsExpParams& l, const CrossEntropyParams& pass, cudaStream_t stream) {
  const DeviceInfo& dev = device_info();
  if (!dev.available) throw std::logic_error("logits_exp: no sm_90a image for this device");
  if (l.rows == 0) return;
  const Scratch s = scratch_of(l.scratch, l.rows);
  PS_CUDA(cudaMemsetAsync(s.offset, 0xff, static_cast<std::size_t>(l.rows) * 4, stream));
  const CUtensorMap tx = tensor_map(l.x, l.rows, l.d, kBM), tw = tensor_map(l.w, l.v, l.d, kBN);
  Walk walk{};
  walk.m_tiles = static_cast<int>((l.rows + kBM - 1) / kBM);
  walk.tiles = walk.m_tiles * static_cast<int>(workload::lmhead_exp_tiles(l.v));
  const int k_blocks = static_cast<int>((l.d + kBK - 1) / kBK);
  const auto grid = static_cast<unsigned>(std::min(walk.tiles, dev.blocks));
  kernel_for(l.softcap > 0, l.bias != nullptr)<<<grid, kThreads, kSmemBytes, stream>>>(
      tx, tw, l, pass, s, walk, k_blocks);
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
