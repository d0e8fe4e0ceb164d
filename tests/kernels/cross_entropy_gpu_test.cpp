// The cross-entropy pass with a row shared by a cluster of blocks against one block a row (which
// the LM head tests hold to the fp64 reference): the same losses, log-sum-exps and gradients on
// random logits, for every option, 2 to 8 blocks a row, the partial last vector in any block,
// and blocks with nothing of the row to hold.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <random>
#include <vector>

#include "powershape/kernels/cross_entropy.cuh"

namespace powershape::kernels {
namespace {

struct Outputs {
  std::vector<float> loss, zloss, lse;
  std::vector<__nv_bfloat16> grad;
};

struct PassCase {
  int64_t rows, v;
  float smoothing = 0, z_loss = 0, softcap = 0;
  bool write_grad = true;
  int blocks = 2;  // blocks a row
};

using Pass = std::function<void(const CrossEntropyParams&, int64_t)>;

Outputs run(const PassCase& c, const std::vector<__nv_bfloat16>& logits, const std::vector<int32_t>& targets,
            const Pass& pass) {
  const int64_t ld = (c.v + 7) / 8 * 8;
  __nv_bfloat16* d_logits = nullptr;
  int32_t* d_t = nullptr;
  float* d_out = nullptr;
  int* d_valid = nullptr;
  EXPECT_EQ(cudaMalloc(&d_logits, logits.size() * 2), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_t, targets.size() * 4), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_out, c.rows * 12), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&d_valid, sizeof(int)), cudaSuccess);
  cudaMemcpy(d_logits, logits.data(), logits.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(d_t, targets.data(), targets.size() * 4, cudaMemcpyHostToDevice);
  cudaMemset(d_out, 0xff, c.rows * 12);  // NaN until written
  count_valid(d_t, false, c.rows, -100, d_valid, nullptr);
  CrossEntropyParams p{};
  p.logits = d_logits;
  p.ld = ld;
  p.v = c.v;
  p.targets = d_t;
  p.ignore_index = -100;
  p.label_smoothing = c.smoothing;
  p.z_loss = c.z_loss;
  p.softcap = c.softcap;
  p.valid_count = d_valid;
  p.grad_scale = 1;
  p.mean = true;
  p.write_grad = c.write_grad;
  p.token_loss = d_out;
  p.token_zloss = d_out + c.rows;
  p.lse = d_out + 2 * c.rows;
  pass(p, c.rows);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Outputs o;
  std::vector<float> out(static_cast<std::size_t>(c.rows * 3));
  cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost);
  o.loss.assign(out.begin(), out.begin() + c.rows);
  o.zloss.assign(out.begin() + c.rows, out.begin() + 2 * c.rows);
  o.lse.assign(out.begin() + 2 * c.rows, out.end());
  o.grad.resize(logits.size());
  cudaMemcpy(o.grad.data(), d_logits, logits.size() * 2, cudaMemcpyDeviceToHost);
  for (void* q : {static_cast<void*>(d_logits), static_cast<void*>(d_t), static_cast<void*>(d_out),
                  static_cast<void*>(d_valid)}) {
    cudaFree(q);
  }
  return o;
}

void expect_same(const PassCase& c, uint64_t seed) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA GPU";
  const int64_t ld = (c.v + 7) / 8 * 8;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0, 3);
  std::vector<__nv_bfloat16> logits(static_cast<std::size_t>(c.rows * ld));
  for (auto& e : logits) e = __float2bfloat16(g(rng));
  std::vector<int32_t> targets(static_cast<std::size_t>(c.rows));
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(c.v - 1));
  for (std::size_t r = 0; r < targets.size(); ++r) targets[r] = r % 5 == 4 ? -100 : pick(rng);
  const Outputs a = run(c, logits, targets, [](const CrossEntropyParams& p, int64_t rows) {
    cross_entropy(p, rows, nullptr, 1);
  });
  const Outputs b = run(c, logits, targets, [&](const CrossEntropyParams& p, int64_t rows) {
    cross_entropy(p, rows, nullptr, c.blocks);
  });
  for (int64_t r = 0; r < c.rows; ++r) {
    ASSERT_FALSE(std::isnan(b.loss[r])) << "row " << r;
    EXPECT_NEAR(b.loss[r], a.loss[r], 1e-4f * (1 + std::abs(a.loss[r]))) << "row " << r;
    EXPECT_NEAR(b.zloss[r], a.zloss[r], 1e-4f * (1 + std::abs(a.zloss[r]))) << "row " << r;
    EXPECT_NEAR(b.lse[r], a.lse[r], 1e-4f * (1 + std::abs(a.lse[r]))) << "row " << r;
  }
  if (!c.write_grad) return;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.grad.size(); ++i) {
    const double x = __bfloat162float(a.grad[i]), y = __bfloat162float(b.grad[i]);
    ASSERT_FALSE(std::isnan(y)) << "logit " << i;
    num += (x - y) * (x - y);
    den += x * x;
  }
  EXPECT_LT(std::sqrt(num / den), 1e-2);
}

TEST(CrossEntropyGpu, TwoBlocksAndAPartialLastVector) { expect_same({9, 1003}, 1); }
TEST(CrossEntropyGpu, FiveBlocksWithEveryOption) {
  PassCase c{7, 151939};
  c.smoothing = 0.1f;
  c.z_loss = 1e-3f;
  c.softcap = 20;
  c.blocks = 5;
  expect_same(c, 2);
}
TEST(CrossEntropyGpu, ForwardOnly) {
  PassCase c{5, 32000};
  c.write_grad = false;
  c.blocks = 3;
  expect_same(c, 3);
}
TEST(CrossEntropyGpu, EightBlocksOnManyRows) {
  PassCase c{600, 128256};
  c.blocks = 8;
  expect_same(c, 4);
}
TEST(CrossEntropyGpu, BlocksWithNothingToHold) {
  PassCase c{5, 20};
  c.blocks = 8;  // three vectors a row: five of the eight blocks hold none
  expect_same(c, 5);
}
TEST(CrossEntropyGpu, TheDefaultKeepsSegmentsSmall) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA GPU";
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  const bool clusters = prop.major >= 9;
  EXPECT_EQ(cross_entropy_blocks_per_row(32000), 1);
  EXPECT_EQ(cross_entropy_blocks_per_row(151936), clusters ? 5 : 1);
  EXPECT_EQ(cross_entropy_blocks_per_row(1 << 21), clusters ? 8 : 1);
  CrossEntropyParams p{};
  EXPECT_THROW(cross_entropy(p, 1, nullptr, 9), std::invalid_argument);
}

}  // namespace
}  // namespace powershape::kernels
