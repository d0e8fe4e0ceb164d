#pragma once
// bf16 matrix products through cuBLASLt, fp32 accumulation, column-major as BLAS sees them.
#include <cublasLt.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace powershape::kernels {

enum class Out { kBf16, kFp32 };

// A batch of like products, each `stride_*` elements after the one before in A, B and D
// (cuBLASLt's strided batch: one kernel); count 1 is one product.
struct GemmBatch {
  int64_t count = 1, stride_a = 0, stride_b = 0, stride_d = 0;
};

// A product's shape as a plan is keyed: trans_a, trans_b, m, n, k, lda, ldb, ldd, out, bias, the
// batch (count, strides) and, for a batch, the alignment in bytes every operand keeps (at most 256,
// cuBLASLt's default, which a single product keeps: its heuristics leave out algorithms that need
// more).
using GemmKey = std::tuple<bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int,
                           bool, int64_t, int64_t, int64_t, int64_t, int>;

// A product as Gemm::run was asked for it (column-major, as BLAS sees it): op(A) m x k, op(B)
// k x n.
struct GemmLaunch {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;  // like products in the one launch
};

// While one is alive, every Gemm::run on its thread (any Gemm, the LM head op's included) appends
// what it launched: the GPU tests hold what a workload ran to what its steps say. Nested ones
// each see the launches made while they are the innermost.
class GemmLaunches {
 public:
  GemmLaunches();
  ~GemmLaunches();
  GemmLaunches(const GemmLaunches&) = delete;
  GemmLaunches& operator=(const GemmLaunches&) = delete;
  const std::vector<GemmLaunch>& launches() const { return launches_; }

 private:
  friend class Gemm;
  std::vector<GemmLaunch> launches_;
  GemmLaunches* outer_;
};

class Gemm {
 public:
  Gemm();
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  // D = alpha op(A) op(B) + beta D, with op(A) m x k, op(B) k x n, D m x n; A and B bf16.
  // bias: m values of D's type added to every column of D (cuBLASLt's bias epilogue), or null.
  // A shape's algorithm is the fastest of cuBLASLt's first kCandidates heuristics, timed the first
  // time the shape runs with beta = 0 in the process (D is overwritten then, so the timing runs
  // write into it) outside a CUDA graph capture; until then, and with POWERSHAPE_GEMM_AUTOTUNE=0,
  // the first heuristic. On an H200 the first heuristic is up to 1.23x slower than the fastest of
  // eight for the LM head's products (bench/gemm_algos).
  void run(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
           const void* b, int64_t ldb, void* d, int64_t ldd, Out out, float alpha, float beta,
           cudaStream_t stream, const void* bias = nullptr);
  // `batch.count` such products in one launch (no bias): attention's heads, MoE's experts.
  void run_batched(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                   int64_t lda, const void* b, int64_t ldb, void* d, int64_t ldd, Out out,
                   const GemmBatch& batch, cudaStream_t stream);

 private:
  using Key = GemmKey;
  struct Plan {
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, d;
    std::vector<cublasLtMatmulAlgo_t> candidates;  // the heuristics', first first
    cublasLtMatmulAlgo_t algo;
    bool tuned = false;
  };
  static constexpr int kCandidates = 8, kTimedRounds = 3;
  // Times each candidate (one untimed launch, then kTimedRounds interleaved rounds, median) into
  // d, and keeps the fastest, for every Gemm of the process on this device.
  void tune(const Key& key, Plan& p, const void* a, const void* b, void* d, float alpha,
            cudaStream_t stream, const void* bias);
  void launch(const Key& key, const void* a, const void* b, void* d, float alpha, float beta,
              cudaStream_t stream, const void* bias);
  Plan& plan(const Key& key);
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;
  std::map<Key, Plan> plans_;
};

}  // namespace powershape::kernels
