#pragma once
#include <cstdint>

#include "powershape/workload/plan.hpp"

namespace powershape::workload {

// Fraction of the peak rate an m x n x k product reaches: fewer 128 x 128 output tiles than the
// 132 multiprocessors leave some idle (such a product is first split along k, once per 4096 of k,
// as libraries do), and a short k leaves the pipeline's fill and drain exposed (k / (k + 32)). An approximation from the shape alone; the profile's flops_per_cycle is fitted
// to large products.
double product_efficiency(double m, double n, double k);

struct LmHeadShape {
  int64_t n = 0;  // tokens
  int64_t d = 0;  // hidden size
  int64_t v = 0;  // vocabulary
};

// LM head + cross-entropy over `chunks` row chunks (the last one ragged): per chunk the logits
// product, the softmax/cross-entropy pass over the logits, and with `backward` the dX and dW
// products. The pass moves `ce_bytes_per_logit` bytes per logit: 4 for a fused kernel that reads
// bf16 logits and writes bf16 dlogits in place; an unfused fp32 path (materialised fp32 logits,
// separate softmax, loss and gradient kernels) moves 16 or more. Throws std::invalid_argument on
// a non-positive size or more chunks than tokens.
Plan lmhead_plan(const LmHeadShape& s, int chunks, bool backward = true,
                 double ce_bytes_per_logit = 4);

// The paper's minimal reproduction: S = Q K^T (rows x d x cols), softmax over S, O = P V, chunked
// over rows.
Plan msm_plan(int64_t rows, int64_t d, int64_t cols, int chunks);

// Back-to-back size^3 products (the load profiles are calibrated with).
Plan products_plan(int64_t size);

// One period of a square wave: a compute burst of `duty` x period (sized for `flops_per_s`, the
// rate the burst would run at unthrottled) and a gap of the rest, idle or memory-bound (sized for
// `bytes_per_s`).
enum class Gap { kIdle, kMemory };
Plan square_plan(double period_s, double duty, Gap gap, double flops_per_s, double bytes_per_s);

}  // namespace powershape::workload
