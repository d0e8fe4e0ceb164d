#pragma once
// The kernels the LM head op (kernels/lmhead.cu) launches, in order, for a shape and options. The
// op walks them with a visitor that launches each; the simulator's plan of the LM head is derived
// from the same walk (steps.hpp). No CUDA headers.
#include <algorithm>
#include <cstdint>

#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"
#include "powershape/workload/kinds/lmhead/lmhead.hpp"
#include "powershape/workload/lmhead_options.hpp"

namespace powershape::workload {

struct LmHeadStep {
  enum Kind {
    kCountValid,  // targets not ignored, over all tokens
    kLogits,      // logits [rows x V] = X_c W^T: a rows x V x D product
    kPass,        // softmax / cross-entropy over the chunk's logits, gradient written in place
    kScaleX,      // X_c times each row's factor (one-read pass), into dX_c
    kDbias,       // dbias (+)= the column sums of dlogits (with a bias whose gradient is asked for)
    kDw,          // dW (+)= dlogits^T X_c: a V x D x rows product
    kDx,          // dX_c = dlogits W: a rows x D x V product
    kScaleDx,     // dX_c times each row's factor
    kReduce,      // the per-token losses summed (and the z-losses, when asked for)
  } kind;
  int64_t chunk = 0, row0 = 0, rows = 0;
};

// The chunk count a caller gets by default (chunks 0 and no tokens_per_chunk): the fewest chunks
// whose logits buffer holds at most kDefaultChunkBytes (the op's memory then stays about half a
// GiB above Cut Cross-Entropy's, which keeps no logits), of at least kDefaultMinRows tokens each,
// below which a chunk's products get short and its fixed cost (dW read and written once more)
// grows against the memory it saves.
constexpr double kDefaultChunkBytes = 512.0 * (1 << 20);
constexpr int64_t kDefaultMinRows = 1024;
inline int lmhead_default_chunks(int64_t n, int64_t v) {
  const double row_bytes = 2.0 * static_cast<double>(lmhead_row_stride(v));
  const int64_t rows =
      std::max(kDefaultMinRows, static_cast<int64_t>(kDefaultChunkBytes / row_bytes));
  return static_cast<int>(std::max<int64_t>(1, (n + rows - 1) / rows));
}

// The options with the default chunk count made explicit for an N x V head.
inline LmHeadOptions lmhead_resolved(const LmHeadOptions& o, int64_t n, int64_t v) {
  LmHeadOptions r = o;
  if (r.chunks == 0 && r.tokens_per_chunk <= 0) r.chunks = lmhead_default_chunks(n, v);
  return r;
}

// Tokens per chunk: tokens_per_chunk when set, else the common split into `chunks`.
inline int64_t lmhead_rows_per_chunk(int64_t n, const LmHeadOptions& o) {
  if (o.tokens_per_chunk > 0) return std::min(o.tokens_per_chunk, n);
  if (o.chunks < 1)
    throw invalid_input("lmhead: chunks must be at least 1 (or tokens_per_chunk set)");
  return rows_per_chunk(n, o.chunks);
}

// Without label smoothing the pass reads each row once and leaves a factor a row for the products
// to apply (cross_entropy_scaled); with it, the two-read pass writes the gradient itself.
inline bool lmhead_one_read(const LmHeadOptions& o) { return o.label_smoothing == 0; }

// dbias: the backward pass also sums dlogits' columns into the bias gradient.
template <class F>
void lmhead_steps(int64_t n, const LmHeadOptions& o, bool dbias, F&& f) {
  const bool one_read = lmhead_one_read(o);
  f(LmHeadStep{LmHeadStep::kCountValid, 0, 0, n});
  for_each_chunk(n, lmhead_rows_per_chunk(n, o), [&](int64_t c, int64_t row0, int64_t rows) {
    f(LmHeadStep{LmHeadStep::kLogits, c, row0, rows});
    f(LmHeadStep{LmHeadStep::kPass, c, row0, rows});
    if (!o.backward) return;
    if (one_read) f(LmHeadStep{LmHeadStep::kScaleX, c, row0, rows});
    if (dbias) f(LmHeadStep{LmHeadStep::kDbias, c, row0, rows});
    f(LmHeadStep{LmHeadStep::kDw, c, row0, rows});
    f(LmHeadStep{LmHeadStep::kDx, c, row0, rows});
    if (one_read) f(LmHeadStep{LmHeadStep::kScaleDx, c, row0, rows});
  });
  f(LmHeadStep{LmHeadStep::kReduce, 0, 0, n});
}

}  // namespace powershape::workload
