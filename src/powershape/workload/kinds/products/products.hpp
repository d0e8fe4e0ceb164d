#pragma once
// size x size x size bf16 products back to back (the load profiles are calibrated with); not a
// command-line workload.
#include "powershape/workload/kind.hpp"

namespace powershape::workload {

struct Products {
  int64_t size = 0;

  static constexpr const char* kName = "products";
  static constexpr const char* kShape = nullptr;  // not on the command line
  static constexpr bool kChunked = false;
  enum Kernel { kProduct };

  static std::optional<Products> from_args(const WorkloadArgs&, const Sizes&) {
    return std::nullopt;
  }
  static std::optional<Products> from_name(const NameParts&) { return std::nullopt; }
  static std::vector<Products> examples() { return {Products{256}}; }
  std::string name(int chunks) const;
  void check(int chunks) const;
  void steps(int chunks, const Rates& r, const StepFn& f) const;
};

}  // namespace powershape::workload

namespace powershape::kernels {
std::unique_ptr<KindOnGpu> on_gpu(const workload::Products& p, int chunks, GpuContext& gpu);
}  // namespace powershape::kernels
