#pragma once
// The kernels GpuWorkload runs for one iteration of a workload, in order. GpuWorkload walks them
// with a visitor that launches each; tests walk them without a GPU and hold them to the plan the
// simulator runs (tests/kernels/steps_test.cpp). No CUDA headers.
#include <cstdint>
#include <stdexcept>
#include <variant>

#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/chunks.hpp"

namespace powershape::kernels {

struct WorkloadStep {
  enum Kind {
    kProduct,  // an m x n x k bf16 product (C [m x n] = A [m x k] B [k x n])
    kSoftmax,  // softmax over m rows of n bf16 values, in place
    kStream,   // a memory-bound copy of `bytes` (read + written)
    kSpin,     // one block spinning for `seconds`: an idle gap
    kLmHead,   // the LM head op (kernels/lmhead_steps.hpp lists what it launches)
  } kind;
  const char* phase;  // the plan phase it belongs to: "qk", "burst", "logits", ...
  int64_t m = 0, n = 0, k = 0;
  int64_t row0 = 0;  // the chunk's first row
  double bytes = 0, seconds = 0;
  bool accumulate = false;  // a product added into its result (the LM head's dW after chunk 1)
  double result_bytes = 2;  // bytes of each result element (the LM head's dW: its dtype's)
};

template <class F>
void workload_steps(const workload::Workload& w, const workload::Rates& rates, F&& f) {
  using S = WorkloadStep;
  if (const auto* p = std::get_if<workload::Products>(&w.kind)) {
    f(S{S::kProduct, "product", p->size, p->size, p->size});
  } else if (const auto* sq = std::get_if<workload::Square>(&w.kind)) {
    const auto z = workload::size_square(*sq, rates);
    const int64_t n = workload::SquareSizing::kBurstSize;
    for (int64_t i = 0; i < z.full; ++i) f(S{S::kProduct, "burst", n, n, n});
    if (z.last_k > 0) f(S{S::kProduct, "burst", n, n, z.last_k});
    if (sq->gap == workload::Gap::kMemory) {
      f(S{S::kStream, "gap", 0, 0, 0, 0, z.gap_bytes});
    } else {
      f(S{S::kSpin, "gap", 0, 0, 0, 0, 0, z.gap_s});
    }
  } else if (const auto* m = std::get_if<workload::Msm>(&w.kind)) {
    workload::for_each_chunk(
        m->rows, workload::rows_per_chunk(m->rows, w.chunks),
        [&](int64_t, int64_t row0, int64_t r) {
          f(S{S::kProduct, "qk", r, m->cols, m->width, row0});  // S [r x cols] = Q_c K^T
          f(S{S::kSoftmax, "softmax", r, m->cols, 0, row0, 4.0 * static_cast<double>(r * m->cols)});
          f(S{S::kProduct, "pv", r, m->width, m->cols, row0});  // O_c [r x d] = P V
        });
  } else if (const auto* l = std::get_if<workload::LmHead>(&w.kind)) {
    if (l->products_only) {
      workload::for_each_chunk(l->tokens, workload::rows_per_chunk(l->tokens, w.chunks),
                               [&](int64_t, int64_t row0, int64_t r) {
                                 f(S{S::kProduct, "logits", r, l->vocab, l->width, row0});
                                 S dw{S::kProduct, "dw", l->vocab, l->width, r, row0};
                                 dw.accumulate = row0 > 0;  // from the second chunk on
                                 dw.result_bytes = l->dw_bytes;
                                 f(dw);
                                 f(S{S::kProduct, "dx", r, l->width, l->vocab, row0});
                               });
    } else {
      f(S{S::kLmHead, "lmhead"});
    }
  } else {
    throw invalid_input("a custom plan has no kernels: only the simulator runs it");
  }
}

}  // namespace powershape::kernels
