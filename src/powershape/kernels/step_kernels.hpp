#pragma once
// What each step of a workload is as a kernel to time: its name, a product's m x n x k and the
// bytes it moves. probe --record labels its per-kernel times so, and sim calibrate models each
// from these figures. No CUDA headers.
#include <string_view>

#include "powershape/kernels/lmhead_steps.hpp"
#include "powershape/kernels/workload_steps.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/kernel_time.hpp"

namespace powershape::kernels {

// bf16 operands, a result of result_bytes_per_element (read back too when it accumulates).
inline workload::KernelTime product_kernel(const char* name, int64_t m, int64_t n, int64_t k,
                                           double result_bytes_per_element, bool accumulate) {
  workload::KernelTime t;
  t.name = name;
  t.m = m;
  t.n = n;
  t.k = k;
  t.bytes = workload::product_bytes(static_cast<double>(m), static_cast<double>(n),
                                    static_cast<double>(k), result_bytes_per_element, accumulate);
  return t;
}

inline workload::KernelTime memory_kernel(const char* name, double bytes) {
  workload::KernelTime t;
  t.name = name;
  t.bytes = bytes;
  return t;
}

inline workload::KernelTime kernel_of(const WorkloadStep& s) {
  switch (s.kind) {
    case WorkloadStep::kProduct:
      return product_kernel(s.phase, s.m, s.n, s.k, s.result_bytes, s.accumulate);
    case WorkloadStep::kSoftmax:
    case WorkloadStep::kStream:
      return memory_kernel(s.phase, s.bytes);
    case WorkloadStep::kSpin:
    case WorkloadStep::kLmHead:
      break;
  }
  return memory_kernel(s.phase, 0);
}

// An LM head step of the op as workload `l` runs it. The one-read pass reads each logit and,
// backward, writes its gradient in place (the forward pass writes none).
inline workload::KernelTime kernel_of(const LmHeadStep& s, const workload::LmHead& l) {
  const double rows = static_cast<double>(s.rows), dd = static_cast<double>(l.width),
               vv = static_cast<double>(l.vocab);
  switch (s.kind) {
    case LmHeadStep::kCountValid:
      return memory_kernel("count_valid", 4 * rows);
    case LmHeadStep::kLogits:
      return product_kernel("logits", s.rows, l.vocab, l.width, 2, false);
    case LmHeadStep::kPass:
      return memory_kernel("cross_entropy", (l.backward ? 4 : 2) * rows * vv);
    case LmHeadStep::kScaleX:
      return memory_kernel("scale_x", 4 * rows * dd);
    case LmHeadStep::kDbias:
      return memory_kernel("dbias", 2 * rows * vv);
    case LmHeadStep::kDw:
      return product_kernel("dw", l.vocab, l.width, s.rows, l.dw_bytes, s.chunk > 0);
    case LmHeadStep::kDx:
      return product_kernel("dx", s.rows, l.width, l.vocab, 2, false);
    case LmHeadStep::kScaleDx:
      return memory_kernel("scale_dx", 4 * rows * dd);
    case LmHeadStep::kReduce:
      return memory_kernel("reduce", 4 * rows);
  }
  return memory_kernel("?", 0);
}

// The op's options for workload `l` at `chunks`.
inline LmHeadOptions lmhead_options(const workload::LmHead& l, int chunks) {
  LmHeadOptions o;
  o.chunks = chunks;
  o.backward = l.backward;
  o.dw_fp32 = l.dw_bytes == 4;
  return o;
}

}  // namespace powershape::kernels
