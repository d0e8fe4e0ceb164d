#pragma once
// What a workload's kernel asks of the GPU (a plan's phase), and the arithmetic of a product's
// phase from its shape alone. No workload in here: each kind (kinds/) builds its steps' phases
// with these.
#include <cstdint>
#include <string>

namespace powershape::workload {

// What one step of a workload asks of the GPU. A compute phase is matrix arithmetic that runs at
// the clock-dependent compute rate; a memory phase streams bytes at the memory bandwidth; an idle
// phase only takes time (a host gap, a spin kernel on one SM).
enum class PhaseKind { kCompute, kMemory, kIdle };

struct Phase {
  std::string name;
  PhaseKind kind = PhaseKind::kCompute;
  double flops = 0;             // kCompute
  double bytes = 0;             // kMemory (bytes read + written)
  double seconds = 0;           // kIdle
  double efficiency = 1;        // kCompute: fraction of the device's peak rate this product reaches
  int64_t m = 0, n = 0, k = 0;  // kCompute: the product's shape, when the plan knows it
  double result_bytes = 0;      // kCompute: of `bytes`, the result's (its epilogue's traffic)
  // kMemory, a kernel that works row by row (a block a row) and reads each row again after its
  // first pass: the bytes of those later reads (beyond `bytes`) and of one row. They come from L2
  // while the rows in flight fit it (the device's kernels.l2_row_bytes), else from memory again.
  double reread_bytes = 0, row_bytes = 0;
  // A kernel of its own, which costs the device's launch time beyond its work; false for a
  // phase whose work came from a recorded duration (a kernel timeline), which holds it already.
  bool launched = true;
};

std::string to_string(PhaseKind k);

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
// `batch` products of m x n x k, each with operands of its own (attention's heads, MoE's experts)
// as one phase: their flops and bytes summed, their rows stacked (m: batch x m, the tiles they
// fill together), the k-efficiency of one.
Phase batched_product(const std::string& name, int64_t batch, int64_t m, int64_t n, int64_t k);
// A memory-bound kernel's phase moving `bytes`.
Phase stream(const std::string& name, double bytes);

// The project's softmax over m rows of n bf16 values (kernels/synthetic.cu; attention's masked
// one): a block a row, three passes (max, sum, write): read and written once, read twice more.
Phase softmax_rows_phase(const std::string& name, int64_t m, int64_t n);

// A device's unthrottled rates: dense bf16 products (FLOP/s) and streaming copies (bytes read +
// written per second). Square waves are sized with them.
struct Rates {
  double flops_per_s = 0, bytes_per_s = 0;
};

}  // namespace powershape::workload
