#pragma once
// The LM head's logits product with the softmax's exponent in its epilogue (Hopper only): one
// pass writes exp(z - c) for each logit z of a chunk, never z itself, and leaves each row's
// statistics for a small finishing kernel. The separate cross-entropy pass, which reads and
// writes every logit once more (10% of the op at D = 896), is gone.
//
// c is one offset a row, shared by every tile of the row through device memory: the first tile to
// finish sets it to its own maximum; a tile whose maximum lies more than 30 above it raises it.
// Each tile records the offset it used and its sum of exp(z - c) (logits_exp_finish puts them on
// one offset, and rescales the rare tile that wrote under an older one). What is written is the
// one-read cross-entropy pass's output (cross_entropy.cuh: row_scale[r] times it is the gradient).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/workload/workload.hpp"

namespace powershape::kernels {

struct LogitsExpParams {
  const __nv_bfloat16* x;     // the chunk's rows [rows x d]; 16-byte aligned
  const __nv_bfloat16* w;     // [v x d]; 16-byte aligned
  const __nv_bfloat16* bias;  // [v] added to the logits, or null
  int64_t rows, d, v, ld;     // d a multiple of 8; ld >= v a multiple of 8
  float softcap;              // > 0: logits -> softcap tanh(logits / softcap)
  bool write;                 // false: the statistics alone (the forward pass)
  __nv_bfloat16* out;         // [rows x ld]: exp(z - c), times the soft-cap's derivative
  void* scratch;              // logits_exp_scratch_bytes(rows, v)
};

// Whether the current device runs the kernel (an sm_90 GPU, and a build for sm_90a).
bool logits_exp_available();
std::size_t logits_exp_scratch_bytes(int64_t rows, int64_t v);
// The product and its epilogue. p.targets of `pass` gives each row's target, whose (soft-capped)
// logit is kept for the loss.
void logits_exp(const LogitsExpParams& l, const CrossEntropyParams& pass, cudaStream_t stream);
// Each row's loss, log-sum-exp, row_scale and target entry from what logits_exp left, as
// cross_entropy_scaled does them from the logits (pass.logits is l.out).
void logits_exp_finish(const LogitsExpParams& l, const CrossEntropyParams& pass,
                       cudaStream_t stream);

}  // namespace powershape::kernels
