#pragma once
// The cross-entropy pass's parameters as the benches use them: a mean loss over `rows` rows of
// `ld` logits (the first `v` count), int32 targets with -100 ignored, and the four per-row arrays
// (token loss, z-loss, lse, row_scale) side by side in `stats` [4 x rows].
#include <cuda_bf16.h>

#include <cstdint>

#include "powershape/kernels/cross_entropy.cuh"

inline powershape::kernels::CrossEntropyParams bench_pass(__nv_bfloat16* logits, int64_t ld,
                                                          int64_t v, const int32_t* targets,
                                                          const int* valid, float* stats,
                                                          int64_t rows, bool grad) {
  powershape::kernels::CrossEntropyParams p{};
  p.logits = logits;
  p.ld = ld;
  p.v = v;
  p.targets = targets;
  p.ignore_index = -100;
  p.valid_count = valid;
  p.grad_scale = 1;
  p.mean = true;
  p.write_grad = grad;
  p.token_loss = stats;
  p.token_zloss = stats + rows;
  p.lse = stats + 2 * rows;
  p.row_scale = stats + 3 * rows;
  return p;
}
