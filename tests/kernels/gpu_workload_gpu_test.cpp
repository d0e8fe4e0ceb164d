#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "powershape/kernels/gemm.hpp"
#include "powershape/kernels/gpu_workload.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/chunks.hpp"
#include "powershape/workload/steps.hpp"

namespace powershape::kernels {

class GpuWorkloadGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA GPU";
  }
};

TEST_F(GpuWorkloadGpu, EveryKindRunsAndIsTimed) {
  const workload::Rates rates = measure_peak_rates();
  EXPECT_GT(rates.flops_per_s, 1e13);
  EXPECT_GT(rates.bytes_per_s, 1e11);
  using workload::Workload;
  for (const auto& plan :
       {workload::msm_plan({1000, 64, 1024}, 3), workload::lmhead_plan({100, 64, 1003}, 4),
        workload::lmhead_plan({100, 64, 1003, true, 4, true}, 1),
        workload::lmhead_plan({100, 64, 1003, true, 4, true}, 3), workload::products_plan({1024}),
        workload::make_plan({workload::Attention{1000, 4, 64}, 3}, {}),
        workload::make_plan({workload::Moe{1000, 256, 8, 2, 512}, 3}, {}),
        workload::square_plan({2, 0.5, workload::Gap::kIdle}, rates),
        workload::square_plan({2, 0.5, workload::Gap::kMemory}, rates)}) {
    GpuWorkload w(plan.workload, rates);
    w.run_for(
        0.01);  // warm-up: a first iteration that loads modules and plans products is no measure
    auto r = w.run_for(0.05);
    EXPECT_GT(r.iterations, 0) << plan.name;
    EXPECT_GT(r.ms_per_iteration, 0) << plan.name;
    EXPECT_DOUBLE_EQ(r.compute_flops, plan.total_flops() * r.iterations) << plan.name;
    EXPECT_LE(r.compute_ms, r.ms_per_iteration * r.iterations * 1.5) << plan.name;
  }
  // A square wave's bursts are timed apart from its gaps: half of each 2 ms period.
  GpuWorkload sq(Workload{workload::Square{2, 0.5, workload::Gap::kIdle}}, rates);
  sq.run_for(0.01);
  auto r = sq.run_for(0.2);
  EXPECT_NEAR(r.ms_per_iteration, 2.0, 0.6);
  EXPECT_LT(r.compute_ms / r.iterations, 0.8 * r.ms_per_iteration);
}

// Each kernel timed alone is the plan's phase of the same place: names and shapes agree with
// what the simulator runs, the times add up to about an iteration's (probe --record), and each
// has the real clock the probe counted while it ran.
TEST_F(GpuWorkloadGpu, EachKernelIsTimedInThePlansOrder) {
  const workload::Rates rates = measure_peak_rates();
  for (const auto& plan :
       {workload::lmhead_plan({4096, 256, 8000}, 4), workload::msm_plan({4096, 64, 4096}, 2),
        workload::lmhead_plan({4096, 256, 8000, true, 4, true}, 3),
        workload::square_plan({2, 0.5, workload::Gap::kIdle}, rates)}) {
    GpuWorkload w(plan.workload, rates);
    w.run_for(0.01);
    const auto ks = w.time_kernels(5);
    std::size_t timed = 0;
    for (const auto& ph : plan.phases) timed += ph.kind != workload::PhaseKind::kIdle;
    if (plan.name.rfind("square", 0) == 0) {
      EXPECT_GE(ks.size(), 1u) << plan.name;  // the burst's products, one by one
      continue;
    }
    ASSERT_EQ(ks.size(), timed) << plan.name;
    double sum = 0;
    for (std::size_t i = 0; i < ks.size(); ++i) {
      EXPECT_EQ(ks[i].name, plan.phases[i].name) << plan.name << " " << i;
      EXPECT_EQ(ks[i].m, plan.phases[i].m) << plan.name << " " << i;
      EXPECT_DOUBLE_EQ(ks[i].bytes, plan.phases[i].bytes) << plan.name << " " << i;
      EXPECT_GT(ks[i].ms, 0) << plan.name << " " << i;
      // The clock probe saw it run: a clock a GPU has (0 would be a window the probe missed).
      EXPECT_GT(ks[i].real_mhz, 500) << plan.name << " " << i;
      EXPECT_LT(ks[i].real_mhz, 3500) << plan.name << " " << i;
      sum += ks[i].ms;
    }
    const auto r = w.run_for(0.05);
    EXPECT_NEAR(sum, r.ms_per_iteration, 0.5 * r.ms_per_iteration + 0.05) << plan.name;
  }
}

TEST_F(GpuWorkloadGpu, ACustomPlanIsRefused) {
  EXPECT_THROW(GpuWorkload(workload::Workload{workload::Custom{}}, {1e15, 1e12}),
               powershape::Error);
}

// What each kind launches is what its steps say: every product its steps list reaches cuBLASLt
// (the LM head op's included) in order, as one launch (a batch of like products, attention's
// heads or MoE's experts, in one strided-batched call), with the step's own shape (m x n in either
// order, as a column-major call swaps them; a batch's rows stacked in the phase) and its flops. The
// steps are not checked against themselves: a wrong m, n, k or batch passed to Gemm fails here.
TEST_F(GpuWorkloadGpu, EveryKindLaunchesTheProductsItsStepsList) {
  const workload::Rates rates = measure_peak_rates();
  workload::for_each_kind([&](auto kind) {
    for (const auto& k : decltype(kind)::examples()) {
      if constexpr (std::is_same_v<decltype(kind), workload::LmHead>)
        if (k.exp_in_product) continue;  // its logits product is the op's own kernel
      for (int chunks : {1, 3}) {
        if constexpr (!decltype(kind)::kChunked)
          if (chunks > 1) continue;
        const workload::Workload w{k, chunks};
        std::vector<std::pair<workload::Phase, int64_t>> products;  // each with its batch
        workload::workload_steps(w, rates, [&](const workload::WorkloadStep& s) {
          for (const auto& p : s.phases)
            if (p.kind == workload::PhaseKind::kCompute) products.emplace_back(p, s.batch);
        });
        GpuWorkload gpu(w, rates);
        GemmLaunches seen;
        gpu.time_kernels(1);  // one timed iteration, then two under the clock probe
        const std::string name = workload::name_of(w);
        ASSERT_EQ(seen.launches().size(), 3 * products.size()) << name;
        for (std::size_t i = 0; i < seen.launches().size(); ++i) {
          const auto& l = seen.launches()[i];
          const auto& [p, batch] = products[i % products.size()];
          EXPECT_EQ(l.batch, batch) << name << " " << p.name;
          EXPECT_DOUBLE_EQ(2.0 * l.m * l.n * l.k * l.batch, p.flops) << name << " " << p.name;
          if (p.m == 0) continue;  // a burst's phase keeps no shape
          EXPECT_EQ(l.k, p.k) << name << " " << p.name;
          const bool shape =
              (l.m * l.batch == p.m && l.n == p.n) || (l.m == p.n && l.n * l.batch == p.m);
          EXPECT_TRUE(shape) << name << " " << p.name << ": launched " << l.batch << " x " << l.m
                             << "x" << l.n << ", steps say " << p.m << "x" << p.n;
        }
      }
    }
  });
}

// What the attention kind computes is causal attention at every chunk count: O against the fp64
// reference from the same Q, K and V (bf16 inputs and scores: 2e-2 of O's scale).
TEST_F(GpuWorkloadGpu, AttentionIsCausalAttentionAtEveryChunkCount) {
  const workload::Attention a{200, 3, 64};
  for (int chunks : {1, 3, 7, 200}) {  // 3 and 7: ragged last chunks
    GpuWorkload gpu(workload::Workload{a, chunks}, measure_peak_rates());
    gpu.run_for(0.001);
    const auto t = gpu.tensors();
    const auto want =
        workload::causal_attention(t.at("q"), t.at("k"), t.at("v"), a.seq, a.heads, a.head_dim);
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(want[i] - t.at("o")[i]));
    EXPECT_LT(worst, 2e-2) << "chunks " << chunks;
  }
}

// What msm computes is softmax(Q K^T) V at every chunk count (a ragged last chunk at 3): O against
// the fp64 reference from the same Q, K and V (bf16 scores and P: 3e-2 of O's scale).
TEST_F(GpuWorkloadGpu, MsmIsMatmulSoftmaxMatmulAtEveryChunkCount) {
  const workload::Msm m{200, 64, 512};
  for (int chunks : {1, 3}) {
    GpuWorkload gpu(workload::Workload{m, chunks}, measure_peak_rates());
    const auto t = gpu.tensors();  // after the iteration construction runs
    const auto want =
        workload::msm_reference(t.at("q"), t.at("k"), t.at("v"), m.rows, m.width, m.cols);
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      worst = std::max(worst, std::abs(want[i] - t.at("o")[i]));
      scale = std::max(scale, std::abs(want[i]));
    }
    EXPECT_GT(scale, 0.01) << "chunks " << chunks;
    EXPECT_LT(worst, 3e-2 * scale) << "chunks " << chunks;
  }
}

// What the MoE kind computes is its layer at every chunk count (each chunk's capacity its own):
// the output against the fp64 reference from the same inputs and weights (bf16 activations
// between the products: 3e-2 of the output's scale).
TEST_F(GpuWorkloadGpu, MoeIsItsLayerAtEveryChunkCount) {
  const workload::Moe m{512, 256, 8, 2, 512};
  for (int chunks : {1, 3}) {
    GpuWorkload gpu(workload::Workload{m, chunks}, measure_peak_rates());
    gpu.run_for(0.001);
    const auto t = gpu.tensors();
    const auto want =
        workload::moe_layer(m, chunks, t.at("x"), t.at("router"), t.at("w1"), t.at("w2"));
    // A token whose k-th and next logits nearly tie may pick either expert in fp32: left out
    // (none in most draws), as is every later token of the chunk, whose slots it may shift.
    const auto& x = t.at("x");
    const auto& router = t.at("router");
    const int64_t per = workload::rows_per_chunk(m.tokens, chunks);
    int64_t chunk_of_tie = -1;
    double worst = 0, scale = 0;
    for (int64_t tok = 0; tok < m.tokens; ++tok) {
      std::vector<double> logit(static_cast<std::size_t>(m.experts));
      for (int64_t e = 0; e < m.experts; ++e)
        for (int64_t i = 0; i < m.width; ++i)
          logit[e] += double(x[tok * m.width + i]) * router[e * m.width + i];
      std::sort(logit.rbegin(), logit.rend());
      if (logit[m.top_k - 1] - logit[m.top_k] < 1e-3) chunk_of_tie = tok / per;
      if (tok / per == chunk_of_tie) continue;
      for (int64_t i = 0; i < m.width; ++i) {
        const auto at = static_cast<std::size_t>(tok * m.width + i);
        worst = std::max(worst, std::abs(want[at] - t.at("out")[at]));
        scale = std::max(scale, std::abs(want[at]));
      }
    }
    EXPECT_GT(scale, 0.01) << "chunks " << chunks;  // an output, not zeros (0.08-0.09 on an H100)
    EXPECT_LT(worst, 3e-2 * scale) << "chunks " << chunks;
  }
}

// A chunk count whose buffers do not fit says so, naming the workload, the bytes, what is free and
// that more chunks hold less: 262144 tokens of 64 heads at one chunk would hold 8 TiB of scores.
TEST_F(GpuWorkloadGpu, AChunkCountThatDoesNotFitIsNamed) {
  try {
    GpuWorkload gpu(workload::Workload{workload::Attention{262144, 64, 128}, 1}, {1e15, 1e12});
    FAIL() << "8 TiB of scores fitted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kDevice);
    EXPECT_EQ(what.rfind("attention 262144x64x128 chunks=1: cannot allocate 8388608 MiB", 0), 0u)
        << what;
    EXPECT_NE(what.find("MiB free); more chunks hold less at a time"), std::string::npos) << what;
  }
}

// A window after construction is the workload's alone: the first run of a product shape times
// cuBLASLt's candidates (Gemm), which the constructor does, not the first measurement (a GPU
// backend's first window of a configuration held half its iterations before). A shape no other
// test runs (attention's 6144 keys), so that its first run is the first in the process.
TEST_F(GpuWorkloadGpu, AMeasurementAfterConstructionHoldsOnlyItsIterations) {
  GpuWorkload w(workload::Workload{workload::Attention{6144, 24, 128}, 1}, {1e15, 1e12});
  // A window of about 12 iterations on an H100; the timing of two shapes' candidates (8, 4
  // launches each, 1.8 GB of scores each) takes about a window, which would leave 1-2.
  const auto r = w.run_for(0.05);
  ASSERT_GT(r.iterations, 3);
  EXPECT_GT(r.iterations * r.ms_per_iteration, 0.8 * 50) << r.iterations << " iterations";
}

}  // namespace powershape::kernels
