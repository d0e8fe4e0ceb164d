#pragma once
// The LM head op's workspace, laid out in one place the op (kernels/lmhead.cu), the C API and the
// tests share: its size arithmetic is checked, so that no N, D or V a caller passes wraps it
// around to a small number the op would then trust (N = 2^62 once gave a few hundred bytes).
#include <cstddef>
#include <cstdint>

#include "powershape/workload/lmhead_options.hpp"

namespace powershape::workload {

// The largest sizes the op takes: 2^40 tokens, a hidden size of 2^20, 2^31 - 1 classes (a
// target is an int32 on the GPU).
inline constexpr int64_t kLmHeadMaxN = int64_t{1} << 40;
inline constexpr int64_t kLmHeadMaxD = int64_t{1} << 20;
inline constexpr int64_t kLmHeadMaxV = (int64_t{1} << 31) - 1;

struct LmHeadLayout {
  int64_t ld = 0;    // the logits' row stride: V rounded up to 8 elements (16 bytes)
  int64_t rows = 0;  // tokens a chunk
  // Byte offsets of each part (each on 256 bytes), and the total.
  std::size_t logits = 0, token_loss = 0, token_zloss = 0, lse = 0, row_scale = 0, count = 0,
              exp_scratch = 0, total = 0;
};

// The workspace of an N x D x V head under options `o` (chunks resolved or not). Throws
// invalid_input naming N, D or V out of range, the options' problem, or a workspace larger than
// memory can address.
LmHeadLayout lmhead_layout(int64_t n, int64_t d, int64_t v, const LmHeadOptions& o);

// The exponent-in-the-product path's row statistics for `rows` rows of V logits (two floats a
// row, a float2 a row a 256-logit tile), each on 256 bytes; throws as lmhead_layout does.
std::size_t lmhead_exp_scratch_bytes(int64_t rows, int64_t v);

}  // namespace powershape::workload
