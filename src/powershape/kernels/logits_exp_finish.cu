// logits_exp.cuh's finishing kernel: each row's (offset, sum) pairs, one a 256-logit tile, put
// on the row's largest offset, the rare tile written under a smaller one rescaled, then the row's
// loss and gradient factor. Any CUDA GPU runs it (the product before it is sm_90's).
#include "powershape/kernels/ce_math.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/logits_exp.cuh"
#include "powershape/kernels/logits_exp_scratch.cuh"
#include "powershape/workload/lmhead_workspace.hpp"

namespace powershape::kernels {
namespace {

using namespace logits_exp_detail;
constexpr int64_t kTile = workload::kLmHeadExpTile;

// A warp a row, eight rows a block: the lanes read the row's (offset, sum) pairs side by side,
// each every 32nd tile, the first kHeld of them into registers at once (one memory latency, not
// one a tile: a chunk has few rows to hide it behind), and merge them on the row's largest offset;
// a tile that wrote under a smaller one (only when a tile raised the row's offset) is rescaled by
// the lane that read it; then the row's loss and gradient factor.
constexpr int kFinishRowsPerBlock = 8, kHeld = 24;  // 24 x 32 x 256: V up to 196,608 held

__global__ void __launch_bounds__(32 * kFinishRowsPerBlock)
    finish_kernel(CrossEntropyParams p, Scratch s, int64_t rows, int cols) {
  using namespace ce;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t row = blockIdx.x * static_cast<int64_t>(kFinishRowsPerBlock) + threadIdx.x / 32;
  if (row >= rows) return;  // the whole warp: no shuffle below is left short
  const float2* pairs = s.tiles + row * cols;
  float2 held[kHeld];
#pragma unroll
  for (int i = 0; i < kHeld; ++i) {
    const int j = lane + 32 * i;
    held[i] = j < cols ? pairs[j] : make_float2(-INFINITY, 0.f);
  }
  float c = -INFINITY, sum = 0;
#pragma unroll
  for (int i = 0; i < kHeld; ++i) merge(c, sum, held[i].x, held[i].y);
  for (int j = lane + 32 * kHeld; j < cols; j += 32) merge(c, sum, pairs[j].x, pairs[j].y);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float c2 = __shfl_xor_sync(0xffffffffu, c, o), s2 = __shfl_xor_sync(0xffffffffu, sum, o);
    merge(c, sum, c2, s2);
  }
  if (p.write_grad) {
    auto* vec = reinterpret_cast<uint4*>(p.logits + row * p.ld);
    // Tile j wrote under offset `used`: put it on the row's (the common case: it is that one).
    auto rescale = [&](int j, float used) {
      if (used == c) return;
      const float f = ex2((used - c) * kLog2e);
      const int64_t first = static_cast<int64_t>(j) * kTile;
      const int64_t last = first + kTile < p.ld ? first + kTile : p.ld;
      for (int64_t u = first / 8; u < last / 8; ++u) vec[u] = scaled(vec[u], f);
    };
#pragma unroll
    for (int i = 0; i < kHeld; ++i) {
      if (lane + 32 * i < cols) rescale(lane + 32 * i, held[i].x);
    }
    for (int j = lane + 32 * kHeld; j < cols; j += 32) rescale(j, pairs[j].x);
  }
  __syncwarp();  // every rescale of the row before its target's entry is written
  if (lane == 0) finish_one_read_row(p, row, c, sum, s.target_logit[row]);
}

}  // namespace

std::size_t logits_exp_scratch_bytes(int64_t rows, int64_t v) {
  return workload::lmhead_exp_scratch_bytes(rows, v);
}

void logits_exp_finish(const LogitsExpParams& l, const CrossEntropyParams& pass,
                       cudaStream_t stream) {
  if (l.rows == 0) return;
  const auto blocks =
      static_cast<unsigned>((l.rows + kFinishRowsPerBlock - 1) / kFinishRowsPerBlock);
  finish_kernel<<<blocks, 32 * kFinishRowsPerBlock, 0, stream>>>(
      pass, scratch_of(l.scratch, l.rows), l.rows,
      static_cast<int>(workload::lmhead_exp_tiles(l.v)));
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
