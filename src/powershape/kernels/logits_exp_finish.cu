// logits_exp.cuh's finishing kernel: each row's (offset, sum) pairs, one a 256-logit tile, put
// on the row's largest offset, the rare tile written under a smaller one rescaled, then the row's
// loss and gradient factor. Any CUDA GPU runs it (the product before it is sm_90's).
#include "powershape/kernels/ce_math.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/logits_exp.cuh"
#include "powershape/kernels/logits_exp_scratch.cuh"

namespace powershape::kernels {
namespace {

using namespace logits_exp_detail;
constexpr int64_t kTile = workload::kLmHeadExpTile;

// A block a 32 rows, 8 threads a row (each every 8th tile: a warp reads 32 rows of one tile, which
// lie side by side): the tiles' (offset, sum) pairs put on the row's largest offset; tiles that
// wrote under a smaller one (only when a tile raised the row's offset) rescaled; then the row's
// loss and gradient factor.
constexpr int kFinishRows = 32, kFinishSplit = 8;

__global__ void __launch_bounds__(kFinishRows* kFinishSplit)
    finish_kernel(CrossEntropyParams p, Scratch s, int64_t rows, int cols) {
  using namespace ce;
  __shared__ float part_c[kFinishSplit][kFinishRows], part_s[kFinishSplit][kFinishRows];
  const int r = static_cast<int>(threadIdx.x) % kFinishRows,
            g = static_cast<int>(threadIdx.x) / kFinishRows;
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
      const int64_t first = static_cast<int64_t>(j) * kTile;
      const int64_t last = first + kTile < p.ld ? first + kTile : p.ld;
      auto* vec = reinterpret_cast<uint4*>(p.logits + row * p.ld);
      for (int64_t i = first / 8; i < last / 8; ++i) vec[i] = scaled(vec[i], f);
    }
  }
  __syncthreads();  // every rescale of the row before its target's entry is written
  if (valid && g == 0) finish_one_read_row(p, row, c, sum, s.target_logit[row]);
}

}  // namespace

std::size_t logits_exp_scratch_bytes(int64_t rows, int64_t v) {
  return 2 * align256(static_cast<std::size_t>(rows) * 4) +
         align256(static_cast<std::size_t>(rows * workload::lmhead_exp_tiles(v)) * sizeof(float2));
}

void logits_exp_finish(const LogitsExpParams& l, const CrossEntropyParams& pass,
                       cudaStream_t stream) {
  if (l.rows == 0) return;
  const auto blocks = static_cast<unsigned>((l.rows + kFinishRows - 1) / kFinishRows);
  finish_kernel<<<blocks, kFinishRows * kFinishSplit, 0, stream>>>(
      pass, scratch_of(l.scratch, l.rows), l.rows,
      static_cast<int>(workload::lmhead_exp_tiles(l.v)));
  PS_LAUNCHED();
}

}  // namespace powershape::kernels
