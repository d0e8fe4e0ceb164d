#pragma once
// A square wave: a compute burst of `duty` x the period (products), then a gap of the rest, idle
// (one block spinning) or memory-bound (a stream). Sized with the device's unthrottled rates.
#include "powershape/workload/kind.hpp"

namespace powershape::workload {

enum class Gap { kIdle, kMemory };

struct Square {
  double period_ms = 0, duty = 0;
  Gap gap = Gap::kIdle;

  static constexpr const char* kName = "square";
  static constexpr const char* kShape = "";  // its period and duty are its options
  static constexpr bool kChunked = false;
  enum Kernel { kBurst, kStream, kSpin };

  static std::optional<Square> from_args(const WorkloadArgs& a, const Sizes&);
  static std::optional<Square> from_name(const NameParts&) { return std::nullopt; }
  static std::vector<Square> examples();
  std::string name(int chunks) const;
  void check(int chunks) const;
  void steps(int chunks, const Rates& r, const StepFn& f) const;
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

}  // namespace powershape::workload

namespace powershape::kernels {
std::unique_ptr<KindOnGpu> on_gpu(const workload::Square& s, int chunks, GpuContext& gpu);
}  // namespace powershape::kernels
