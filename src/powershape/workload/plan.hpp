#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace powershape::workload {

// What one step of a workload asks of the GPU. A compute phase is matrix arithmetic that runs at
// the clock-dependent compute rate; a memory phase streams bytes at the memory bandwidth; an idle
// phase only takes time (a host gap, a spin kernel on one SM).
enum class PhaseKind { kCompute, kMemory, kIdle };

struct Phase {
  std::string name;
  PhaseKind kind = PhaseKind::kCompute;
  double flops = 0;        // kCompute
  double bytes = 0;        // kMemory (bytes read + written)
  double seconds = 0;      // kIdle
  double efficiency = 1;   // kCompute: fraction of the device's peak rate this product reaches
};

// What a builder made a plan from, so that a GPU can run the real kernels rather than the
// phases' stand-ins. kCustom: a plan read from a file, which only the simulator runs.
struct Spec {
  enum class Kind { kCustom, kLmHead, kMsm, kSquare, kProducts } kind = Kind::kCustom;
  int64_t a = 0, b = 0, c = 0;  // lmhead N, D, V; msm rows, d, cols; products: size
  int chunks = 1;
  bool backward = true;
  double period_s = 0, duty = 0;
  bool memory_gap = false;
};

// One iteration of a workload: the phases in the order the GPU runs them.
struct Plan {
  std::string name;
  std::vector<Phase> phases;
  Spec spec;
  double total_flops() const;
};

std::string to_string(PhaseKind k);

}  // namespace powershape::workload
