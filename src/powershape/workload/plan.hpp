#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/workload/workload.hpp"

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

// One iteration of a workload: the phases in the order the GPU runs them, and the workload they
// were derived from (Custom for a plan read from a file), so that a GPU can run the real kernels.
struct Plan {
  std::string name;
  std::vector<Phase> phases;
  Workload workload;
  double total_flops() const;
};

std::string to_string(PhaseKind k);

}  // namespace powershape::workload
