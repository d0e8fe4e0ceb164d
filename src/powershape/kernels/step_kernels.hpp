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

// bf16 operands, a bf16 result (fp32 for dw, read back too when it accumulates).
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
      // The LM head's products alone write dW in fp32, as the op does.
      return product_kernel(s.phase, s.m, s.n, s.k, std::string_view(s.phase) == "dw" ? 4 : 2,
                            s.accumulate);
    case WorkloadStep::kSoftmax:
    case WorkloadStep::kStream:
      return memory_kernel(s.phase, s.bytes);
    case WorkloadStep::kSpin:
    case WorkloadStep::kLmHead:
      break;
  }
  return memory_kernel(s.phase, 0);
}

// An LM head step over N x D x V; the one-read pass reads each logit and, backward, writes its
// gradient in place (the forward pass writes none).
inline workload::KernelTime kernel_of(const LmHeadStep& s, int64_t d, int64_t v, bool backward) {
  const double rows = static_cast<double>(s.rows), dd = static_cast<double>(d),
               vv = static_cast<double>(v);
  switch (s.kind) {
    case LmHeadStep::kCountValid:
      return memory_kernel("count_valid", 4 * rows);
    case LmHeadStep::kLogits:
      return product_kernel("logits", s.rows, v, d, 2, false);
    case LmHeadStep::kPass:
      return memory_kernel("cross_entropy", (backward ? 4 : 2) * rows * vv);
    case LmHeadStep::kScaleX:
      return memory_kernel("scale_x", 4 * rows * dd);
    case LmHeadStep::kDbias:
      return memory_kernel("dbias", 2 * rows * vv);
    case LmHeadStep::kDw:
      return product_kernel("dw", v, d, s.rows, 4, s.chunk > 0);
    case LmHeadStep::kDx:
      return product_kernel("dx", s.rows, d, v, 2, false);
    case LmHeadStep::kScaleDx:
      return memory_kernel("scale_dx", 4 * rows * dd);
    case LmHeadStep::kReduce:
      return memory_kernel("reduce", 4 * rows);
  }
  return memory_kernel("?", 0);
}

}  // namespace powershape::kernels
