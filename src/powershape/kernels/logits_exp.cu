// logits_exp.cuh's kernels. The product is a persistent, warp-specialised Hopper kernel: per block
// one producer warp feeds 128 x 256 tiles of X and W, 32 deep in K, through the tensor copy engine
// into six shared-memory stages (four ahead of the two the products hold: a copy's latency is
// longer than one stage's products); two warpgroups multiply (each 128 rows x 128 columns of the
// tile, wgmma from shared memory, fp32 accumulators), add the bias and leave the tile in shared
// memory as bf16 (the logits' own precision); a fourth warpgroup turns it into exp(z - c), one warp
// a row, with 16-byte stores, while the two multiply the next tile. So the exponent costs no
// product time as long as a tile's epilogue is shorter than its product (K = D >= ~256 on an H200).
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
#include "powershape/kernels/sm90.cuh"
#include "powershape/workload/builders.hpp"

namespace powershape::kernels {
namespace {

constexpr int kBM = 128, kBN = 256, kBK = 32, kStages = 6, kThreads = 512;
constexpr uint32_t kStageA = kBM * kBK * 2, kStageB = kBN * kBK * 2;
static_assert(kBN == workload::kLmHeadStatTile, "the plans count the tiles this kernel keeps");
constexpr int kPitch = kBN * 2 + 16;  // a staged row, padded: a warp's 8-row writes hit 32 banks
constexpr int kSmemBytes =
    1024 + kStages * (kStageA + kStageB) + kBM * kPitch + 8 * (2 * kStages + 2);
constexpr uint32_t kUnset = 0xFFFFFFFFu;  // a row's offset before any tile has set it (a NaN)
constexpr float kRaise = 30.f;            // exp(z - c) stays below e^30 (bf16 and fp32: e^88)

// Where the scratch's three arrays start: each row's offset (float bits), each row's target logit,
// and each (tile column, row)'s offset used and sum of exp(z - c).
struct Scratch {
  uint32_t* offset;
  float* target_logit;
  float2* tiles;
};

std::size_t align256(std::size_t b) { return (b + 255) / 256 * 256; }

int tile_cols(int64_t v) { return static_cast<int>(workload::lmhead_stat_tiles(v)); }

Scratch scratch_of(void* p, int64_t rows) {
  auto* b = static_cast<char*>(p);
  const std::size_t r = align256(static_cast<std::size_t>(rows) * 4);
  return {reinterpret_cast<uint32_t*>(b), reinterpret_cast<float*>(b + r),
          reinterpret_cast<float2*>(b + 2 * r)};
}

// The tiles a block takes, in order. The two blocks of a cluster take two row blocks of one column
// block at a time: they share W's tile, each loading half of it for both (multicast), which cuts
// what the products read from L2 by a third. m_pairs is ceil(row blocks / 2); a pair's second row
// block may lie past the rows (its rows then read as zeros and are never written).
struct Walk {
  int m_pairs, pairs;
  __device__ int first() const { return static_cast<int>(blockIdx.x / 2); }
  __device__ int stride() const { return static_cast<int>(gridDim.x / 2); }
  __device__ int m(int pair) const {
    return 2 * (pair % m_pairs) + static_cast<int>(blockIdx.x % 2);
  }
  __device__ int n(int pair) const { return pair / m_pairs; }
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

__device__ __forceinline__ void warp_max4(float (&v)[4]) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] = fmaxf(v[u], __shfl_xor_sync(0xffffffffu, v[u], o));
  }
}

__device__ __forceinline__ void warp_sum4(float (&v)[4]) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
#pragma unroll
    for (int u = 0; u < 4; ++u) v[u] += __shfl_xor_sync(0xffffffffu, v[u], o);
  }
}

// The multiplying warpgroup `half` (0, 1): its 128 x 128 part of each tile, into shared memory.
__device__ __forceinline__ void multiply(const LogitsExpParams& p, int half, uint32_t a0,
                                         uint32_t b0, unsigned char* staging, uint32_t full,
                                         uint32_t empty, uint32_t staged, uint32_t freed, Walk walk,
                                         int k_blocks) {
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  int stage = 0;
  uint32_t phase = 0, freed_parity = 1;  // the staging buffer starts free
  float lo[64], hi[64];                  // rows 0-63 and 64-127 of the part
  const uint32_t peer = sm90::cluster_rank() ^ 1;
  // A stage is free again once both blocks' products are done with it: the peer's producer writes
  // half of W's tile into this block too.
  auto release = [&](int st) {
    if (lane != 0) return;
    sm90::bar_arrive(empty + 8 * st);
    sm90::bar_arrive_in(empty + 8 * st, peer);
  };
  for (int pair = walk.first(); pair < walk.pairs; pair += walk.stride()) {
    const int n = walk.n(pair);
    int prev = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
      sm90::bar_wait(full + 8 * stage, phase);
      sm90::pin(lo);
      sm90::pin(hi);
      sm90::wgmma_fence();
#pragma unroll
      for (int k = 0; k < kBK / 16; ++k) {
        const uint32_t a = a0 + stage * kStageA + k * 32;  // rows of kBK bf16: 64 bytes
        const uint32_t b = b0 + stage * kStageB + half * 128 * 64 + k * 32;
        const bool acc = kb > 0 || k > 0;
        sm90::wgmma_m64n128(lo, sm90::desc_k64(a), sm90::desc_k64(b), acc);
        sm90::wgmma_m64n128(hi, sm90::desc_k64(a + 64 * 64), sm90::desc_k64(b), acc);
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
    sm90::pin(lo);
    sm90::pin(hi);
    release(prev);
    // bf16(z + bias) into the staging buffer, once the epilogue has read the last tile out of it.
    sm90::bar_wait(freed, freed_parity);
    freed_parity ^= 1;
    const int row = warp * 16 + lane / 4, col = half * 128 + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const int c = col + 8 * j;
      const int64_t vc = static_cast<int64_t>(n) * kBN + c;
      float b0v = 0, b1v = 0;
      if (p.bias != nullptr) {
        if (vc < p.v) b0v = __bfloat162float(p.bias[vc]);
        if (vc + 1 < p.v) b1v = __bfloat162float(p.bias[vc + 1]);
      }
      auto put = [&](int r, float x0, float x1) {
        *reinterpret_cast<uint32_t*>(staging + r * kPitch + c * 2) = ce::pack(x0 + b0v, x1 + b1v);
      };
      put(row, lo[4 * j], lo[4 * j + 1]);
      put(row + 8, lo[4 * j + 2], lo[4 * j + 3]);
      put(row + 64, hi[4 * j], hi[4 * j + 1]);
      put(row + 72, hi[4 * j + 2], hi[4 * j + 3]);
    }
    sm90::bar_arrive(staged);
  }
}

// The epilogue warpgroup: for each staged tile, each warp its 32 rows, four at a time.
__device__ __forceinline__ void exponentiate(const LogitsExpParams& p,
                                             const CrossEntropyParams& pass, Scratch s,
                                             const unsigned char* staging, uint32_t staged,
                                             uint32_t freed, Walk walk) {
  using namespace ce;
  const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
  const float cap = p.softcap;
  uint32_t staged_parity = 0;
  for (int pair = walk.first(); pair < walk.pairs; pair += walk.stride()) {
    const int m = walk.m(pair), n = walk.n(pair);
    const int64_t row0 = static_cast<int64_t>(m) * kBM + 32 * warp;  // this warp's first row
    const int64_t mine = row0 + lane;                                // the row this lane keeps
    const bool mine_valid = mine < p.rows;
    // Read before the tile is staged: the offsets as they stand, and the targets.
    uint32_t seen = kUnset;
    if (mine_valid) seen = *static_cast<volatile uint32_t*>(s.offset + mine);
    const int64_t target =
        mine_valid ? target_of(pass.targets, pass.targets_int64, mine) : int64_t{-1};
    const int64_t col0 = static_cast<int64_t>(n) * kBN + 8 * lane;  // this lane's 8 columns
    const bool ragged = col0 + 8 > p.v;  // columns past V: only in a row's last tile
    float keep_c = 0, keep_s = 0;
    sm90::bar_wait(staged, staged_parity);
    staged_parity ^= 1;
#pragma unroll 1
    for (int g = 0; g < 8; ++g) {
      float z[4][8], mx[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int r = 32 * warp + 4 * g + u;
        unpack(*reinterpret_cast<const uint4*>(staging + r * kPitch + lane * 16), z[u]);
        mx[u] = -INFINITY;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          if (cap > 0) z[u][k] = cap * tanhf(z[u][k] / cap);
          if (ragged && col0 + k >= p.v) z[u][k] = -INFINITY;
          mx[u] = fmaxf(mx[u], z[u][k]);
        }
      }
      if (g == 7) sm90::bar_arrive(freed);  // the last rows are in registers
      warp_max4(mx);
      float c[4], sum[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int i = 4 * g + u;
        const int64_t row = row0 + i;
        const uint32_t bits = __shfl_sync(0xffffffffu, seen, i);
        c[u] = __uint_as_float(bits);
        if (row < p.rows && (bits == kUnset || mx[u] > c[u] + kRaise)) {  // the same in every lane
          if (lane == 0) c[u] = resolve_offset(s.offset + row, mx[u], bits);
          c[u] = __shfl_sync(0xffffffffu, c[u], 0);
        }
        // The target's place among this lane's columns, if it is there (else outside 0-7).
        const int64_t to = __shfl_sync(0xffffffffu, target, i) - col0;
        const int at = to >= 0 && to < 8 && row < p.rows ? static_cast<int>(to) : -1;
        const float cl = c[u] * kLog2e;
        float g8[8];
        sum[u] = 0;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
          const float e = ex2(fmaf(z[u][k], kLog2e, -cl));
          sum[u] += e;
          if (cap > 0) {
            const float q = z[u][k] / cap;
            g8[k] = !ragged || col0 + k < p.v ? e * (1 - q * q) : 0.f;
          } else {
            g8[k] = e;
          }
        }
        if (at >= 0) {  // rare: one lane of one tile a row
#pragma unroll
          for (int k = 0; k < 8; ++k) {
            if (k == at) s.target_logit[row] = z[u][k];
          }
        }
        if (p.write && row < p.rows && col0 < p.ld) {
          *reinterpret_cast<uint4*>(p.out + row * p.ld + col0) = make_uint4(
              pack(g8[0], g8[1]), pack(g8[2], g8[3]), pack(g8[4], g8[5]), pack(g8[6], g8[7]));
        }
      }
      warp_sum4(sum);
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        if (lane == 4 * g + u) {
          keep_c = c[u];
          keep_s = sum[u];
        }
      }
    }
    if (mine_valid) s.tiles[static_cast<int64_t>(n) * p.rows + mine] = make_float2(keep_c, keep_s);
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// Writes 1 where the image the device loaded has the Hopper instructions (sm_90a), else 0.
__global__ void sm90a_probe(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *out = 1;
#else
  *out = 0;
#endif
}

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads, 1)
    logits_exp_kernel(const __grid_constant__ CUtensorMap tx,
                      const __grid_constant__ CUtensorMap tw, const LogitsExpParams p,
                      const CrossEntropyParams pass, Scratch s, Walk walk, int k_blocks) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ unsigned char smem_raw[];
  auto* smem = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) /
                                                1024 * 1024);  // beyond the swizzle's 512
  const uint32_t a0 = sm90::smem_addr(smem), b0 = a0 + kStages * kStageA;
  unsigned char* staging = smem + kStages * (kStageA + kStageB);
  const uint32_t bars = sm90::smem_addr(staging) + kBM * kPitch;
  const uint32_t full = bars, empty = bars + 8 * kStages, staged = bars + 16 * kStages,
                 freed = staged + 8;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      sm90::bar_init(full + 8 * i, 1);
      sm90::bar_init(empty + 8 * i, 16);  // each multiplying warp of both blocks
    }
    sm90::bar_init(staged, 256);  // each multiplying thread
    sm90::bar_init(freed, 128);   // each epilogue thread
    sm90::bar_init_fence();
  }
  sm90::cluster_sync();  // the peer's barriers are set before either block arrives on them
  const int role = threadIdx.x / 128;
  if (role == 0) {
    sm90::regs_give<40>();
    if (threadIdx.x == 0) {
      int stage = 0;
      uint32_t phase = 0;
      const int rank = static_cast<int>(sm90::cluster_rank());
      for (int pair = walk.first(); pair < walk.pairs; pair += walk.stride()) {
        const int m = walk.m(pair), n = walk.n(pair);
        for (int kb = 0; kb < k_blocks; ++kb) {
          sm90::bar_wait(empty + 8 * stage, phase ^ 1);
          sm90::bar_expect(full + 8 * stage, kStageA + kStageB);
          sm90::tma_load(a0 + stage * kStageA, &tx, kb * kBK, m * kBM, full + 8 * stage);
          sm90::tma_load_multicast(b0 + stage * kStageB + rank * (kStageB / 2), &tw, kb * kBK,
                                   n * kBN + rank * (kBN / 2), full + 8 * stage, 0x3);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else if (role <= 2) {
    sm90::regs_take<184>();
    multiply(p, role - 1, a0, b0, staging, full, empty, staged, freed, walk, k_blocks);
  } else {
    sm90::regs_give<104>();
    exponentiate(p, pass, s, staging, staged, freed, walk);
  }
  sm90::cluster_sync();  // the peer may still write into this block's stages until it is done
#endif
}

// A block a 32 rows, 8 threads a row (each every 8th tile: a warp reads 32 rows of one tile, which
// lie side by side): the tiles' (offset, sum) pairs put on the row's largest offset; tiles that
// wrote under a smaller one (only when a tile raised the row's offset) rescaled; then the row's
// loss and gradient factor.
constexpr int kFinishRows = 32, kFinishSplit = 8;

__global__ void __launch_bounds__(kFinishRows* kFinishSplit)
    finish_kernel(CrossEntropyParams p, Scratch s, int64_t rows, int cols) {
  using namespace ce;
  __shared__ float part_c[kFinishSplit][kFinishRows], part_s[kFinishSplit][kFinishRows];
  const int r = threadIdx.x % kFinishRows, g = threadIdx.x / kFinishRows;
  const int64_t row = blockIdx.x * static_cast<int64_t>(kFinishRows) + r;
  const bool valid = row < rows;
  float c = -INFINITY, sum = 0;
#pragma unroll 4
  for (int j = g; valid && j < cols; j += kFinishSplit) {
    const float2 t = s.tiles[j * rows + row];
    merge(c, sum, t.x, t.y);
  }
  part_c[g][r] = c;
  part_s[g][r] = sum;
  __syncthreads();
  c = -INFINITY;
  sum = 0;
  for (int i = 0; i < kFinishSplit; ++i) merge(c, sum, part_c[i][r], part_s[i][r]);
  if (valid && p.write_grad) {
    for (int j = g; j < cols; j += kFinishSplit) {
      const float2 t = s.tiles[j * rows + row];
      if (t.x == c) continue;  // the common case: the tile wrote under the row's final offset
      const float f = ex2((t.x - c) * kLog2e);
      const int64_t first = static_cast<int64_t>(j) * kBN;
      const int64_t last = first + kBN < p.ld ? first + kBN : p.ld;
      auto* vec = reinterpret_cast<uint4*>(p.logits + row * p.ld);
      for (int64_t i = first / 8; i < last / 8; ++i) {
        float z[8];
        unpack(vec[i], z);
        vec[i] = make_uint4(pack(z[0] * f, z[1] * f), pack(z[2] * f, z[3] * f),
                            pack(z[4] * f, z[5] * f), pack(z[6] * f, z[7] * f));
      }
    }
  }
  __syncthreads();  // every rescale of the row before its target's entry is written
  if (valid && g == 0) finish_one_read_row(p, row, c, sum, s.target_logit[row]);
}

using EncodeFn = PFN_cuTensorMapEncodeTiled_v12000;

EncodeFn encoder() {
  static EncodeFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    PS_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                             &q));
    if (f == nullptr || q != cudaDriverEntryPointSuccess)
      throw std::runtime_error("logits_exp: the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<EncodeFn>(f);
  }();
  return fn;
}

// A [rows x cols] row-major bf16 matrix read in boxes of kBK columns x box_rows rows, 64-byte
// swizzled (what the products' descriptors expect); out-of-range elements read as zeros.
CUtensorMap tensor_map(const void* base, int64_t rows, int64_t cols, int box_rows) {
  CUtensorMap m{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {kBK, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r =
      encoder()(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides,
                box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_64B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("logits_exp: cuTensorMapEncodeTiled failed (" + std::to_string(r) +
                             ")");
  return m;
}

struct DeviceInfo {
  bool available = false;
  int clusters = 0;  // clusters of two blocks that fit on the GPU at once
};

// Per device, once: whether the kernel has an image for it, and its multiprocessors.
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
  int sms = 0;
  PS_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaFuncAttributes attr{};
  if (major == 9 && minor == 0 && cudaFuncGetAttributes(&attr, sm90a_probe) == cudaSuccess) {
    int* flag = nullptr;
    int has = 0;
    PS_CUDA(cudaMalloc(&flag, sizeof(int)));
    sm90a_probe<<<1, 1>>>(flag);
    PS_LAUNCHED();
    PS_CUDA(cudaMemcpy(&has, flag, sizeof(int), cudaMemcpyDeviceToHost));
    PS_CUDA(cudaFree(flag));
    if (has == 1) {
      PS_CUDA(cudaFuncSetAttribute(logits_exp_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   kSmemBytes));
      // The grid is persistent: no more clusters than fit at once (a GPC with an odd number of
      // multiprocessors leaves one idle).
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(static_cast<unsigned>(sms / 2 * 2));
      config.blockDim = dim3(kThreads);
      config.dynamicSmemBytes = kSmemBytes;
      PS_CUDA(cudaOccupancyMaxActiveClusters(&info.clusters, logits_exp_kernel, &config));
      info.available = info.clusters > 0;
    }
  }
  cudaGetLastError();  // a missing image is an answer, not an error
  return known.emplace(dev, info).first->second;
}

}  // namespace

bool logits_exp_available() { return device_info().available; }

std::size_t logits_exp_scratch_bytes(int64_t rows, int64_t v) {
  return 2 * align256(static_cast<std::size_t>(rows) * 4) +
         align256(static_cast<std::size_t>(rows) * tile_cols(v) * sizeof(float2));
}

void logits_exp(const LogitsExpParams& l, const CrossEntropyParams& pass, cudaStream_t stream) {
  const DeviceInfo& dev = device_info();
  if (!dev.available) throw std::logic_error("logits_exp: no sm_90a image for this device");
  if (l.rows == 0) return;
  const Scratch s = scratch_of(l.scratch, l.rows);
  PS_CUDA(cudaMemsetAsync(s.offset, 0xff, static_cast<std::size_t>(l.rows) * 4, stream));
  // Each block of a pair loads half of W's tile (kBN / 2 rows) for both.
  const CUtensorMap tx = tensor_map(l.x, l.rows, l.d, kBM), tw = tensor_map(l.w, l.v, l.d, kBN / 2);
  Walk walk{};
  walk.m_pairs = static_cast<int>((l.rows + 2 * kBM - 1) / (2 * kBM));
  walk.pairs = walk.m_pairs * tile_cols(l.v);
  const int k_blocks = static_cast<int>((l.d + kBK - 1) / kBK);
  const int grid = 2 * std::min(walk.pairs, dev.clusters);
  logits_exp_kernel<<<grid, kThreads, kSmemBytes, stream>>>(tx, tw, l, pass, s, walk, k_blocks);
  PS_LAUNCHED();
}

void logits_exp_finish(const LogitsExpParams& l, const CrossEntropyParams& pass,
                       cudaStream_t stream) {
  if (l.rows == 0) return;
  const auto blocks = static_cast<unsigned>((l.rows + kFinishRows - 1) / kFinishRows);
  finish_kernel<<<blocks, kFinishRows * kFinishSplit, 0, stream>>>(
      pass, scratch_of(l.scratch, l.rows), l.rows, tile_cols(l.v));
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
