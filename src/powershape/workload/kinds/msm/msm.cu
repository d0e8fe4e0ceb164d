// msm on the GPU: Q K V random, one chunk of S, O; cuBLASLt's products and the project's softmax.
#include "powershape/kernels/kind_on_gpu.hpp"
#include "powershape/kernels/synthetic.cuh"
#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"
#include "powershape/workload/kinds/msm/msm.hpp"

namespace powershape::kernels {
namespace {

class MsmOnGpu : public KindOnGpu {
 public:
  MsmOnGpu(const workload::Msm& m, int chunks, GpuContext& gpu) : gemm_(gpu.gemm), m_(m) {
    if (m.width % 8 != 0 || m.cols % 8 != 0)
      throw invalid_input("msm: d and cols must be multiples of 8");
    q_ = gpu.memory.random_bf16(m.rows * m.width, 1, 1.0f);
    k_ = gpu.memory.random_bf16(m.cols * m.width, 2, 0.2f);
    v_ = gpu.memory.random_bf16(m.cols * m.width, 3, 1.0f);
    s_ = gpu.memory.bf16(workload::rows_per_chunk(m.rows, chunks) * m.cols);  // one chunk
    o_ = gpu.memory.bf16(m.rows * m.width);
  }

  void launch(const workload::WorkloadStep& s, const std::function<void()>& done) override {
    switch (s.code) {
      case workload::Msm::kQk:
        // S [r x cols] = Q_c K^T; column-major (cols x r) = K (as d x cols, transposed) * Q_c^T.
        gemm_.run(true, false, s.n, s.m, s.k, k_, s.k, q_ + s.row0 * s.k, s.k, s_, s.n, Out::kBf16,
                  1, 0, nullptr);
        break;
      case workload::Msm::kSoftmax:
        softmax_rows(s_, s.m, s.n, s.n, nullptr);
        break;
      case workload::Msm::kPv:
        // O_c [r x d] = P V; column-major (d x r) = V^T (d x cols) * P^T (cols x r).
        gemm_.run(false, false, s.n, s.m, s.k, v_, s.n, s_, s.k, o_ + s.row0 * s.n, s.n, Out::kBf16,
                  1, 0, nullptr);
        break;
    }
    done();
  }

  std::map<std::string, std::vector<float>> tensors() const override {
    return {{"q", to_host(q_, m_.rows * m_.width)},
            {"k", to_host(k_, m_.cols * m_.width)},
            {"v", to_host(v_, m_.cols * m_.width)},
            {"o", to_host(o_, m_.rows * m_.width)}};
  }

 private:
  Gemm& gemm_;
  workload::Msm m_;
  __nv_bfloat16 *q_, *k_, *v_, *s_, *o_;
};

}  // namespace

std::unique_ptr<KindOnGpu> on_gpu(const workload::Msm& m, int chunks, GpuContext& gpu) {
  return std::make_unique<MsmOnGpu>(m, chunks, gpu);
}

}  // namespace powershape::kernels
