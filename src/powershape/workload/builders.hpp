#pragma once
// The one place a workload's phases are derived from its description (workload.hpp).
#include <cstdint>

#include "powershape/workload/plan.hpp"

namespace powershape::workload {

// Fraction of the peak rate an m x n x k product reaches on a device of `sms` multiprocessors: its
// k-efficiency (a short k leaves the pipeline's fill and drain exposed: k / (k + 32), what a plan
// carries, device-free) times its fill (fewer 128 x 128 output tiles than multiprocessors leave
// some idle; such a product is first split along k, once per 4096 of k, as libraries do). An
// approximation from the shape alone; a profile's flops_per_cycle is fitted to large products.
double product_k_efficiency(double k);
double product_fill(double m, double n, double k, double sms);
// What whole waves of tiles leave of that, in (0, 1]: 1 where the tiles fill their last wave (or
// all fit in one), 448 tiles on 132 SMs 0.85. product_fill assumes stream-K evens partial waves
// out; a profile's kernels.wave_quantization says how far they do not.
double product_wave_share(double m, double n, double k, double sms);
// Bytes an m x n x k bf16 product moves: its operands once, its result written (and read too
// when it accumulates into it), the result `result_bytes` an element (2 bf16, 4 fp32).
double product_bytes(double m, double n, double k, double result_bytes, bool accumulate);

// A product's phase: its FLOPs, bytes (result `result_bytes` an element, read too when it
// accumulates), efficiency and shape.
Phase product(const std::string& name, double m, double n, double k, double result_bytes = 2,
              bool accumulate = false);
// A memory-bound kernel's phase moving `bytes`.
Phase stream(const std::string& name, double bytes);

// A device's unthrottled rates: dense bf16 products (FLOP/s) and streaming copies (bytes read +
// written per second). Square waves are sized with them.
struct Rates {
  double flops_per_s = 0, bytes_per_s = 0;
};

// A square wave's burst as the GPU runs it: `full` products of kBurstSize^3, then one of
// kBurstSize x kBurstSize x last_k (0: none), so that the burst does duty x period x the
// unthrottled rate's work; and the gap, idle seconds or bytes streamed. last_k is a multiple of
// kStepK: a k that is not a multiple of 8 misaligns bf16 rows, and cuBLASLt then falls back to
// kernels several times slower (a 2 ms wave ran 2.8 ms on the H200 with k = 1890).
struct SquareSizing {
  static constexpr int64_t kBurstSize = 4096;  // as in data/h200
  static constexpr int64_t kStepK = 64;
  int64_t full = 0, last_k = 0;
  double gap_s = 0, gap_bytes = 0;
  double burst_flops() const;
};
SquareSizing size_square(const Square& s, const Rates& r);

// Each throws std::invalid_argument naming what is wrong (a non-positive size, more chunks than
// rows, a duty outside (0, 1)).
//
// Each is derived from the workload's steps (steps.hpp), a phase a kernel: the LM head op's own
// kernels, the LM head's products alone, matmul-softmax-matmul a chunk of rows at a time, the
// products of a square wave as one burst phase.
Plan lmhead_plan(const LmHead& w, int chunks);
Plan msm_plan(const Msm& w, int chunks);
Plan products_plan(const Products& w);
Plan square_plan(const Square& w, const Rates& r);
// Any kind; Custom has no phases to derive and throws.
Plan make_plan(const Workload& w, const Rates& r);

}  // namespace powershape::workload
