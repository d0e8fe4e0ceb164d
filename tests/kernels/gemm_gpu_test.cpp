#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/gemm.hpp"
#include "powershape/kernels/synthetic.cuh"

namespace powershape::kernels {
namespace {

class GemmGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA GPU";
  }
};

constexpr int64_t kM = 384, kN = 256, kK = 512;

std::vector<float> to_host(const void* p, int64_t n) {
  std::vector<__nv_bfloat16> h(static_cast<std::size_t>(n));
  PS_CUDA(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) f[i] = __bfloat162float(h[i]);
  return f;
}

// D = A B (column-major, A m x k, B k x n) in fp32 from the bf16 inputs.
std::vector<float> reference(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> d(kM * kN, 0.f);
  for (int64_t j = 0; j < kN; ++j)
    for (int64_t p = 0; p < kK; ++p)
      for (int64_t i = 0; i < kM; ++i) d[j * kM + i] += a[p * kM + i] * b[j * kK + p];
  return d;
}

double max_rel_error(const std::vector<float>& got, const std::vector<float>& want, double scale) {
  double worst = 0, peak = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - scale * want[i]));
    peak = std::max(peak, std::abs(scale * want[i]));
  }
  return worst / peak;
}

// A (kM x kK) and B (kK x kN) filled from two seeds, D (kM x kN) left as allocated; freed with
// the test.
struct Operands {
  void *a = nullptr, *b = nullptr, *d = nullptr;
  Operands(uint64_t seed_a, uint64_t seed_b) {
    PS_CUDA(cudaMalloc(&a, kM * kK * 2));
    PS_CUDA(cudaMalloc(&b, kK * kN * 2));
    PS_CUDA(cudaMalloc(&d, kM * kN * 2));
    fill_random_bf16(static_cast<__nv_bfloat16*>(a), kM * kK, seed_a, 1, nullptr);
    fill_random_bf16(static_cast<__nv_bfloat16*>(b), kK * kN, seed_b, 1, nullptr);
  }
  ~Operands() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
  }
  Operands(const Operands&) = delete;
  Operands& operator=(const Operands&) = delete;
  std::vector<float> product() const { return reference(to_host(a, kM * kK), to_host(b, kK * kN)); }
};

}  // namespace

// The first product of a shape (beta = 0) times the candidates into D and keeps the fastest; its
// result is the product however D started, and a later beta = 1 product of the shape adds to it.
TEST_F(GemmGpu, ATunedShapeGivesTheProductAndAccumulates) {
  Operands o(1, 2);
  void *a = o.a, *b = o.b, *d = o.d;
  fill_random_bf16(static_cast<__nv_bfloat16*>(d), kM * kN, 3, 100, nullptr);  // junk
  const auto want = o.product();
  Gemm g;
  g.run(false, false, kM, kN, kK, a, kM, b, kK, d, kM, Out::kBf16, 1, 0, nullptr);
  EXPECT_LT(max_rel_error(to_host(d, kM * kN), want, 1), 1e-2);
  g.run(false, false, kM, kN, kK, a, kM, b, kK, d, kM, Out::kBf16, 1, 1, nullptr);
  EXPECT_LT(max_rel_error(to_host(d, kM * kN), want, 2), 1e-2);
}

// Planned inside a CUDA graph capture, a shape is not timed (no synchronisation may happen there):
// the graph replays the first heuristic's product.
TEST_F(GemmGpu, AShapeFirstSeenInACaptureIsNotTimed) {
  Operands o(4, 5);
  void *a = o.a, *b = o.b, *d = o.d;
  PS_CUDA(cudaDeviceSynchronize());
  const auto want = o.product();
  cudaStream_t s;
  PS_CUDA(cudaStreamCreate(&s));
  Gemm g;
  cudaGraph_t graph;
  PS_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  g.run(false, false, kM, kN, kK, a, kM, b, kK, d, kM, Out::kBf16, 1, 0, s);
  PS_CUDA(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  PS_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  PS_CUDA(cudaGraphLaunch(exec, s));
  PS_CUDA(cudaStreamSynchronize(s));
  EXPECT_LT(max_rel_error(to_host(d, kM * kN), want, 1), 1e-2);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

}  // namespace powershape::kernels
