#include "powershape/workload/builders.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "powershape/util/error.hpp"
#include "powershape/workload/args.hpp"
#include "powershape/workload/chunks.hpp"

namespace powershape::workload {

TEST(Builders, TheLmHeadCountsSixNdvAndChunksRaggedly) {
  LmHead s{1000, 896, 151936};
  Plan one = lmhead_plan(s, 1);
  EXPECT_DOUBLE_EQ(one.total_flops(), 6.0 * 1000 * 896 * 151936);
  Plan three = lmhead_plan(s, 3);  // 334 + 334 + 332 tokens
  // count_valid, six kernels a chunk (logits, pass, scale_x, dw, dx, scale_dx), reduce
  EXPECT_EQ(three.phases.size(), 20u);
  EXPECT_DOUBLE_EQ(three.total_flops(), one.total_flops());
  EXPECT_DOUBLE_EQ(three.phases[13].flops, 2.0 * 332 * 896 * 151936);
  EXPECT_EQ(three.phases[4].name, "dw");                        // the op's order
  EXPECT_DOUBLE_EQ(three.phases[2].bytes, 4.0 * 334 * 151936);  // fused: bf16 read + write
  // dW accumulates in its dtype (bf16 by default) from the second chunk on: its result read as
  // well as written; in fp32 twice the bytes.
  EXPECT_DOUBLE_EQ(three.phases[10].bytes - three.phases[4].bytes, 2.0 * 151936 * 896);
  LmHead fp32 = s;
  fp32.dw_bytes = 4;
  const Plan three32 = lmhead_plan(fp32, 3);
  EXPECT_DOUBLE_EQ(three32.phases[10].bytes - three32.phases[4].bytes, 4.0 * 151936 * 896);
  EXPECT_EQ(three32.name, "lmhead 1000x896x151936 chunks=3");  // as recorded before bf16 dW
  EXPECT_EQ(lmhead_plan({1000, 896, 151936, false}, 2).phases.size(), 6u);
  EXPECT_DOUBLE_EQ(lmhead_plan({1000, 896, 151936, true, 16}, 1).phases[2].bytes,
                   16.0 * 1000 * 151936);
  EXPECT_EQ(three.name, "lmhead 1000x896x151936 chunks=3 dw=bf16");
}

TEST(Builders, TheLmHeadsProductsAloneAreItsCeiling) {
  Plan p = make_plan({LmHeadProducts{1000, 896, 151936}, 1}, {});
  ASSERT_EQ(p.phases.size(), 3u);
  for (const auto& ph : p.phases) EXPECT_EQ(ph.kind, PhaseKind::kCompute);
  EXPECT_DOUBLE_EQ(p.total_flops(), 6.0 * 1000 * 896 * 151936);
  EXPECT_EQ(p.name, "lmhead products 1000x896x151936 chunks=1 dw=bf16");
}

// Chunked, the products come a chunk at a time as the op runs them: logits, dW (accumulated in
// its bf16 from the second chunk on, so read and written), dX; the same flops at any count.
TEST(Builders, TheLmHeadsProductsAloneChunkAsTheOpDoes) {
  const Plan one = make_plan({LmHeadProducts{1000, 896, 151936}, 1}, {});
  const Plan three = make_plan({LmHeadProducts{1000, 896, 151936}, 3}, {});
  ASSERT_EQ(three.phases.size(), 9u);
  EXPECT_DOUBLE_EQ(three.total_flops(), one.total_flops());
  const char* order[] = {"logits", "dw", "dx"};
  for (std::size_t i = 0; i < 9; ++i) EXPECT_EQ(three.phases[i].name, order[i % 3]) << i;
  EXPECT_EQ(three.phases[0].m, 334);  // ceil(1000 / 3) rows, the last chunk ragged
  EXPECT_EQ(three.phases[7].k, 332);
  const double dw = 151936.0 * 896 * 2;
  EXPECT_DOUBLE_EQ(three.phases[1].result_bytes, dw);
  EXPECT_DOUBLE_EQ(three.phases[4].result_bytes, 2 * dw);
  EXPECT_EQ(three.name, "lmhead products 1000x896x151936 chunks=3 dw=bf16");
}

// Forward alone, the pass reads the logits and writes no gradient.
TEST(Builders, TheForwardPassAloneMovesTheReadHalfOfThePassesBytes) {
  const Plan p = lmhead_plan({1000, 64, 1003, false}, 1);
  ASSERT_EQ(p.phases.size(), 4u);
  EXPECT_EQ(p.phases[2].name, "cross_entropy");
  EXPECT_DOUBLE_EQ(p.phases[2].bytes, 2.0 * 1000 * 1003);
}

// --exp-in-product: the op as it runs on an sm_90 GPU, named so; only for the LM head op.
TEST(Builders, TheExponentInTheProductIsTheOpsOptionAlone) {
  WorkloadArgs a;
  a.exp_in_product = true;
  const Workload w = describe(a, 2);
  EXPECT_TRUE(std::get<LmHead>(w.kind).exp_in_product);
  EXPECT_EQ(name_of(w), "lmhead 16384x896x151936 chunks=2 dw=bf16 exp=product");
  a.products_only = true;
  EXPECT_THROW(describe(a, 2), Error);
  a.products_only = false;
  a.workload = "msm";
  EXPECT_THROW(describe(a, 2), Error);
}

// Its softmax (kernels/synthetic.cu) reads each row three times and writes it once: the two later
// reads are the rows' to find in L2 or not, and a row is a block's.
TEST(Builders, TheMsmSoftmaxReadsItsRowsAgain) {
  const Plan p = msm_plan({1000, 64, 4096}, 2);
  ASSERT_EQ(p.phases.size(), 6u);
  EXPECT_EQ(p.phases[1].name, "softmax");
  EXPECT_DOUBLE_EQ(p.phases[1].bytes, 4.0 * 500 * 4096);
  EXPECT_DOUBLE_EQ(p.phases[1].reread_bytes, 4.0 * 500 * 4096);
  EXPECT_DOUBLE_EQ(p.phases[1].row_bytes, 2.0 * 4096);
  EXPECT_DOUBLE_EQ(p.phases[0].reread_bytes, 0);
}

TEST(Builders, BadShapesAreRejected) {
  EXPECT_THROW(lmhead_plan({0, 896, 100}, 1), powershape::Error);
  EXPECT_THROW(lmhead_plan({10, 896, 100}, 11), powershape::Error);
  EXPECT_THROW(msm_plan({10, 0, 10}, 1), powershape::Error);
  EXPECT_THROW(square_plan({10, 1.0, Gap::kIdle}, {1e12, 1e12}), powershape::Error);
  EXPECT_THROW(make_plan({Custom{}}, {1e12, 1e12}), powershape::Error);
}

TEST(Builders, EfficiencyFallsForSmallAndShortProducts) {
  const auto efficiency = [](double m, double n, double k, double sms) {
    return product_k_efficiency(k) * product_fill(m, n, k, sms);
  };
  EXPECT_GT(efficiency(8192, 8192, 8192, 132), 0.99);
  EXPECT_LT(efficiency(128, 128, 8192, 132), 0.02);     // two k-splits of one tile on 132 SMs
  EXPECT_LT(efficiency(8192, 8192, 64, 132), 0.7);      // a short k
  EXPECT_GT(efficiency(2048, 896, 151936, 132), 0.95);  // long k is split
  // The device's multiprocessors, not a constant: 16 tiles fill a 16-SM Jetson, not an H200.
  EXPECT_DOUBLE_EQ(product_fill(512, 512, 1024, 16), 1);
  EXPECT_NEAR(product_fill(512, 512, 1024, 132), 16.0 / 132, 1e-12);
}

TEST(Builders, APartialLastWaveLeavesItsShareOfTheSms) {
  EXPECT_NEAR(product_wave_share(8192, 896, 151936, 132), 448.0 / (4 * 132), 1e-12);  // 3.4 waves
  EXPECT_NEAR(product_wave_share(131072, 896, 151936, 132), 7168.0 / (55 * 132), 1e-12);
  EXPECT_DOUBLE_EQ(product_wave_share(128 * 132, 128, 4096, 132), 1);  // one full wave
  EXPECT_DOUBLE_EQ(product_wave_share(128, 128, 8192, 132), 1);  // under one wave: fill has it
  EXPECT_NEAR(product_wave_share(8192, 896, 151936, 48), 448.0 / (10 * 48), 1e-12);
}

TEST(Builders, ASquareWaveHasItsDutyCycle) {
  Plan p = square_plan({10, 0.25, Gap::kMemory}, {1e15, 2e12});
  ASSERT_EQ(p.phases.size(), 2u);
  // The burst is whole steps of 4096 x 4096 x 64: within half a step of 0.0025 s x 1e15.
  EXPECT_NEAR(p.phases[0].flops, 0.0025 * 1e15, 2.0 * 4096 * 4096 * 32);
  EXPECT_EQ(p.phases[1].kind, PhaseKind::kMemory);
  EXPECT_DOUBLE_EQ(p.phases[1].bytes, 0.0075 * 2e12);
  Plan m = msm_plan({100, 64, 1000}, 4);
  EXPECT_EQ(m.phases.size(), 12u);
  EXPECT_DOUBLE_EQ(m.total_flops(), 4.0 * 100 * 64 * 1000);
}

TEST(Builders, ASquareWaveIsSizedInWholeProductColumns) {
  // 5 ms at 1e15 FLOP/s: 5e12 FLOP = 149012 columns of 2 x 4096 x 4096 FLOP, 148992 in whole
  // steps of 64: 36 full 4096^3 products and a 4096 x 4096 x 1536 one.
  SquareSizing z = size_square({10, 0.5, Gap::kIdle}, {1e15, 1e12});
  EXPECT_EQ(z.full, 36);
  EXPECT_EQ(z.last_k, 1536);
  EXPECT_DOUBLE_EQ(z.gap_s, 0.005);
  EXPECT_DOUBLE_EQ(z.gap_bytes, 0);
  // A burst too short for one column still does one.
  EXPECT_EQ(size_square({1e-6, 0.5, Gap::kIdle}, {1e15, 1e12}).last_k, 64);
  // Every k is whole steps of 64, whatever the rate.
  for (double rate : {3.3e14, 7.77e14, 9.89e14}) {
    for (double ms : {1.0, 2.0, 7.0, 333.0})
      EXPECT_EQ(size_square({ms, 0.37, Gap::kIdle}, {rate, 1e12}).last_k % 64, 0);
  }
  // A period past an hour would overflow the column count (found by the plan fuzzer).
  EXPECT_THROW(size_square({8.8e88, 0.5, Gap::kIdle}, {1e15, 1e12}), powershape::Error);
  EXPECT_NO_THROW(size_square({3.6e6, 0.5, Gap::kIdle}, {1e15, 1e12}));
}

TEST(Chunks, RowsSplitByCeilDivisionWithARaggedLastChunk) {
  EXPECT_EQ(rows_per_chunk(1000, 3), 334);
  int64_t total = 0, count = 0, last = 0;
  for_each_chunk(1000, 334, [&](int64_t c, int64_t row0, int64_t rows) {
    EXPECT_EQ(c, count);
    EXPECT_EQ(row0, total);
    total += rows;
    last = rows;
    ++count;
  });
  EXPECT_EQ(total, 1000);
  EXPECT_EQ(count, 3);
  EXPECT_EQ(last, 332);
  EXPECT_THROW(rows_per_chunk(10, 0), powershape::Error);
}

}  // namespace powershape::workload
