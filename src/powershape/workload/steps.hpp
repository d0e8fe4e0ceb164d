#pragma once
// The one description of what a workload runs: its steps, the kernels the GPU launches in order,
// each with what it asks of the GPU as a plan's phase (flops, bytes, seconds). The GPU runs the
// steps (kernels/gpu_workload.cu, and the LM head op its own, lmhead_steps.hpp); the simulator's
// plan is derived from them (builders.cpp: a phase a step); probe --record labels each kernel it
// times with its phase (kernel_of). No CUDA headers.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/chunks.hpp"
#include "powershape/workload/kernel_time.hpp"
#include "powershape/workload/lmhead_steps.hpp"

namespace powershape::workload {

// What the GPU runs for a step.
enum class Op {
  kProduct,  // Products: size^3, back to back
  kBurst,    // a square wave's products (several follow each other)
  kStream,   // a square wave's memory gap: bytes read and written
  kSpin,     // a square wave's idle gap: one block spinning for `seconds`
  kQk,       // msm: S [r x cols] = Q_c K^T
  kSoftmax,  // msm: softmax over the chunk's rows of S, in place
  kPv,       // msm: O_c [r x d] = P V
  kLogits,   // the LM head's products alone (LmHeadProducts), a chunk of tokens at a time
  kDw,
  kDx,
  kLmHead,  // the LM head op itself: its own steps (lmhead_steps)
};

// The step's name in plans, tables and kernels.csv ("qk", "logits", "burst", ...).
const char* op_name(Op op);

struct WorkloadStep {
  Op op;
  int64_t m = 0, n = 0, k = 0;  // a product's m x n x k (C [m x n] = A [m x k] B [k x n]); a
                                // softmax's m rows of n values
  int64_t row0 = 0;             // the chunk's first row
  double bytes = 0, seconds = 0;
  bool accumulate = false;  // a product added into its result (the LM head's dW after chunk 1)
  double result_bytes = 2;  // bytes of each result element (the LM head's dW: its dtype's)
};

// The op's options for LM head workload `l` at `chunks`.
LmHeadOptions lmhead_options(const LmHead& l, int chunks);

// Each step of one iteration of `w`, in order; a square wave is sized with the device's rates.
// Custom workloads have no steps (throws).
template <class F>
void workload_steps(const Workload& w, const Rates& rates, F&& f) {
  using S = WorkloadStep;
  if (const auto* p = std::get_if<Products>(&w.kind)) {
    f(S{Op::kProduct, p->size, p->size, p->size});
  } else if (const auto* sq = std::get_if<Square>(&w.kind)) {
    const auto z = size_square(*sq, rates);
    const int64_t n = SquareSizing::kBurstSize;
    for (int64_t i = 0; i < z.full; ++i) f(S{Op::kBurst, n, n, n});
    if (z.last_k > 0) f(S{Op::kBurst, n, n, z.last_k});
    if (sq->gap == Gap::kMemory) {
      f(S{Op::kStream, 0, 0, 0, 0, z.gap_bytes});
    } else {
      f(S{Op::kSpin, 0, 0, 0, 0, 0, z.gap_s});
    }
  } else if (const auto* m = std::get_if<Msm>(&w.kind)) {
    for_each_chunk(m->rows, rows_per_chunk(m->rows, w.chunks),
                   [&](int64_t, int64_t row0, int64_t r) {
                     f(S{Op::kQk, r, m->cols, m->width, row0});
                     f(S{Op::kSoftmax, r, m->cols, 0, row0});
                     f(S{Op::kPv, r, m->width, m->cols, row0});
                   });
  } else if (const auto* l = std::get_if<LmHeadProducts>(&w.kind)) {
    for_each_chunk(l->tokens, rows_per_chunk(l->tokens, w.chunks),
                   [&](int64_t, int64_t row0, int64_t r) {
                     f(S{Op::kLogits, r, l->vocab, l->width, row0});
                     S dw{Op::kDw, l->vocab, l->width, r, row0};
                     dw.accumulate = row0 > 0;  // from the second chunk on
                     dw.result_bytes = l->dw_bytes;
                     f(dw);
                     f(S{Op::kDx, r, l->width, l->vocab, row0});
                   });
  } else if (std::holds_alternative<LmHead>(w.kind)) {
    f(S{Op::kLmHead});
  } else {
    throw invalid_input("a custom plan has no kernels: only the simulator runs it");
  }
}

// A step as a plan's phase: a product's flops and bytes, a stream's bytes, a spin's seconds.
// The LM head op's step (kLmHead) is its own steps: phase_of each LmHeadStep.
Phase phase_of(const WorkloadStep& s);
Phase phase_of(const LmHeadStep& s, const LmHead& l);
// A phase as probe --record labels the kernel it times: its name, m x n x k, bytes.
KernelTime kernel_of(const Phase& p);

// The names of every memory kernel a built-in workload runs (the LM head op's, msm's softmax, a
// square wave's gap, a fine-tune's), derived from their steps and plans: the kernels a device
// profile may give a memory efficiency (sim/profile.hpp refuses any other name).
const std::vector<std::string>& memory_kernel_names();

}  // namespace powershape::workload
