#pragma once
#include <cstdint>

#include "powershape/workload/plan.hpp"

namespace powershape::workload {

// Fraction of peak a product with `rows` rows in its smallest dimension reaches: small chunks
// fill the GPU less well (a wave-quantization-free approximation, rows / (rows + 96)).
double product_efficiency(int64_t rows);

struct LmHeadShape {
  int64_t n = 0;  // tokens
  int64_t d = 0;  // hidden size
  int64_t v = 0;  // vocabulary
};

// LM head + cross-entropy over `chunks` row chunks (the last one ragged): per chunk the logits
// product, the softmax/cross-entropy pass over the logits (read and written in place, fp32
// stats, bf16 data), and with `backward` the dX and dW products. Throws std::invalid_argument on
// a non-positive size or more chunks than tokens.
Plan lmhead_plan(const LmHeadShape& s, int chunks, bool backward = true);

// The paper's minimal reproduction: S = Q K^T (rows x d x cols), softmax over S, O = P V, chunked
// over rows.
Plan msm_plan(int64_t rows, int64_t d, int64_t cols, int chunks);

// One period of a square wave: a compute burst of `duty` x period (sized for `flops_per_s`, the
// rate the burst would run at unthrottled) and a gap of the rest, idle or memory-bound (sized for
// `bytes_per_s`).
enum class Gap { kIdle, kMemory };
Plan square_plan(double period_s, double duty, Gap gap, double flops_per_s, double bytes_per_s);

}  // namespace powershape::workload
