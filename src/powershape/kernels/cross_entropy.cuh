#pragma once
// The fused softmax / cross-entropy pass over one chunk of logits, rows of `ld` bf16 of which the
// first `v` count: the loss of each row, and with write_grad the gradient written over the logits.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace powershape::kernels {

struct CrossEntropyParams {
  __nv_bfloat16* logits;  // [rows x ld], overwritten with dlogits when write_grad
  int64_t ld, v;
  const void* targets;  // the chunk's first target
  bool targets_int64;
  int64_t ignore_index;
  float label_smoothing, z_loss, softcap;
  const int* valid_count;  // tokens not ignored, over all N (for the mean)
  float grad_scale;
  const float* token_grad;  // the chunk's first of [N] per-token factors of the gradient, or null
  bool mean;
  bool write_grad;
  float* token_loss;   // [rows]
  float* token_zloss;  // [rows]
  float* lse;          // [rows]
  float* row_scale;    // [rows], cross_entropy_scaled only: the gradient is row_scale[r] x row r as
                       // written
};

// Two reads of each row and one write: the gradient itself written over the logits.
void cross_entropy(const CrossEntropyParams& p, int64_t rows, cudaStream_t stream);
// One read and one write (label_smoothing must be 0): over each row goes exp(z - c) for an offset c
// of the row's own choosing (at the target: the target's gradient over row_scale), and the row's
// gradient is row_scale[row] times it; the caller folds row_scale into the products that use it.
void cross_entropy_scaled(const CrossEntropyParams& p, int64_t rows, cudaStream_t stream);
// out[j] (=|+=) sum over r of scale[r] x g[r, j], j < v, for `rows` rows of `ld` bf16 (scale null:
// 1); fp32, deterministic. The bias gradient: the column sums of a chunk's dlogits.
void column_sums(const __nv_bfloat16* g, int64_t ld, int64_t rows, int64_t v, const float* scale,
                 bool accumulate, float* out, cudaStream_t stream);
// out[r, :] = bf16(scale[r] x in[r, :]) for `rows` rows of `d` bf16 (d a multiple of 8); in may be
// out.
void scale_rows(const __nv_bfloat16* in, const float* scale, int64_t rows, int64_t d,
                __nv_bfloat16* out, cudaStream_t stream);
// Counts targets != ignore_index into *count (zeroed first).
void count_valid(const void* targets, bool int64, int64_t n, int64_t ignore_index, int* count,
                 cudaStream_t stream);
// out[0] = sum(values) / (divide_by_valid ? max(*valid, 1) : 1), deterministic.
void reduce_sum(const float* values, int64_t n, const int* valid, bool divide_by_valid, float* out,
                cudaStream_t stream);

}  // namespace powershape::kernels
