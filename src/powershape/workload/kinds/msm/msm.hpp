#pragma once
// The chunking paper's minimal reproduction: S = Q K^T (rows x width x cols), softmax over S,
// O = P V, a chunk of Q's rows at a time.
#include "powershape/workload/kind.hpp"

namespace powershape::workload {

struct Msm {
  int64_t rows = 0, width = 0, cols = 0;

  static constexpr const char* kName = "msm";
  static constexpr const char* kShape = "ROWS,D,COLS";
  static constexpr std::array<int64_t, 3> kDefaultShape = {65536, 512, 65536};
  static constexpr bool kChunked = true;
  enum Kernel { kQk, kSoftmax, kPv };

  static std::optional<Msm> from_args(const WorkloadArgs& a, const Sizes& s);
  static std::optional<Msm> from_name(const NameParts& p);
  static std::vector<Msm> examples();
  std::string name(int chunks) const;
  void check(int chunks) const;
  void steps(int chunks, const Rates& r, const StepFn& f) const;
};

// What it computes, in double (the GPU tests hold its kernels to it at any chunk count): Q
// [rows x d], K and V [cols x d]; returns O [rows x d] = softmax(Q K^T) V, the softmax over each
// row's cols values, unscaled. Throws invalid_input for sizes that do not match.
std::vector<double> msm_reference(const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v, int64_t rows, int64_t width,
                                  int64_t cols);

}  // namespace powershape::workload

namespace powershape::kernels {
std::unique_ptr<KindOnGpu> on_gpu(const workload::Msm& m, int chunks, GpuContext& gpu);
}  // namespace powershape::kernels
