// The steps are the one description of a workload: the simulator's plan is derived from them and
// the GPU launches them. Held here to what each kind computes, in the spirit of ggml's
// test-backend-ops: for every kind and chunk counts 1..64, the kernels the GPU labels as it
// launches them (the LM head op's own steps expanded, as GpuWorkload and LmHead::run walk them)
// are the plan's phases in order, and the plan's arithmetic is the kind's own, whatever the chunk
// count (6NDV for the LM head, its pass moving each logit's bytes once, dW read back from the
// second chunk on).
#include "powershape/workload/steps.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/lmhead_steps.hpp"

namespace powershape::workload {
namespace {

// The kernels the GPU labels for one iteration, in launch order; a spin is an idle gap.
std::vector<KernelTime> launched(const Workload& w, const Rates& r) {
  std::vector<KernelTime> out;
  workload_steps(w, r, [&](const WorkloadStep& s) {
    for (const auto& p : s.phases) out.push_back(kernel_of(p));
  });
  return out;
}

double sum(const Plan& p, PhaseKind kind, const char* name = nullptr) {
  double total = 0;
  for (const auto& ph : p.phases)
    if (ph.kind == kind && (name == nullptr || ph.name == name))
      total += kind == PhaseKind::kCompute ? ph.flops : ph.bytes;
  return total;
}

void expect_consistent(const Workload& w, const Rates& r, double flops) {
  const Plan plan = make_plan(w, r);
  const auto gpu = launched(w, r);
  // A square wave's products are one burst phase; every other kernel is a phase of its own.
  std::size_t i = 0;
  for (const auto& ph : plan.phases) {
    ASSERT_LT(i, gpu.size()) << plan.name;
    EXPECT_EQ(gpu[i].name, ph.name) << plan.name << " phase " << i;
    double bytes = gpu[i].bytes;
    while (ph.name == "burst" && i + 1 < gpu.size() && gpu[i + 1].name == "burst")
      bytes += gpu[++i].bytes;
    EXPECT_DOUBLE_EQ(bytes, ph.bytes) << plan.name << " phase " << i;
    ++i;
  }
  EXPECT_EQ(i, gpu.size()) << plan.name;
  EXPECT_NEAR(sum(plan, PhaseKind::kCompute), flops, flops * 1e-12) << plan.name;
}

TEST(Steps, EveryKindsPlanIsItsKernelsAndItsArithmeticAtEveryChunkCount) {
  const Rates h200{989e12, 4.0e12};
  const auto ndv = [](int64_t n, int64_t d, int64_t v) {
    return static_cast<double>(n) * static_cast<double>(d) * static_cast<double>(v);
  };
  for (int chunks = 1; chunks <= 64; ++chunks) {
    for (const auto& l : {LmHead{16384, 896, 151936}, LmHead{4096, 4096, 128256},
                          LmHead{1000, 64, 1003, false}, LmHead{131072, 896, 151936}}) {
      const Workload w{l, chunks};
      expect_consistent(w, h200, (l.backward ? 6 : 2) * ndv(l.tokens, l.width, l.vocab));
      // The pass moves each logit once (read, and backward written), whatever the chunks.
      EXPECT_DOUBLE_EQ(sum(make_plan(w, h200), PhaseKind::kMemory, "cross_entropy"),
                       (l.backward ? 4 : 2) * static_cast<double>(l.tokens) * l.vocab);
      // With the exponent in the product, no pass over the logits: a finishing one over each
      // row's pairs (8 bytes a 256-logit tile) and 16 bytes of its own a row.
      LmHead fused = l;
      fused.exp_in_product = true;
      expect_consistent({fused, chunks}, h200,
                        (l.backward ? 6 : 2) * ndv(l.tokens, l.width, l.vocab));
      const Plan fp = make_plan({fused, chunks}, h200);
      const double rows = static_cast<double>(l.tokens), tiles = (l.vocab + 255) / 256;
      EXPECT_DOUBLE_EQ(sum(fp, PhaseKind::kMemory, "cross_entropy"), 0);
      EXPECT_DOUBLE_EQ(sum(fp, PhaseKind::kMemory, "ce_finish"), 8 * rows * tiles + 16 * rows);
    }
    for (const auto& m : {Msm{65536, 512, 65536}, Msm{1000, 64, 1024}})
      expect_consistent({m, chunks}, h200, 4 * ndv(m.rows, m.cols, m.width));
    // Causal attention's chunks take the keys up to their last query.
    for (const auto& a : {Attention{32768, 32, 128}, Attention{1000, 3, 64}}) {
      double keys = 0;
      const int64_t per = rows_per_chunk(a.seq, chunks);
      for (int64_t row0 = 0; row0 < a.seq; row0 += per)
        keys += static_cast<double>(std::min(per, a.seq - row0)) *
                static_cast<double>(std::min(row0 + per, a.seq));
      expect_consistent({a, chunks}, h200, 4.0 * keys * a.heads * a.head_dim);
    }
  }
  for (int chunks : {1, 2, 3, 7, 64}) {
    LmHead l{16384, 896, 151936};
    l.dw_bytes = 4;
    expect_consistent({l, chunks}, h200, 6 * ndv(16384, 896, 151936));
    for (double dw : {2.0, 4.0}) {
      const LmHeadProducts p{16384, 896, 151936, dw};
      expect_consistent({p, chunks}, h200, 6 * ndv(16384, 896, 151936));
      // dW accumulates in its dtype from the second chunk on: read as well as written.
      const Plan plan = make_plan({p, chunks}, h200);
      const double dw_bytes = 151936.0 * 896 * dw;
      for (std::size_t c = 0; 3 * c + 1 < plan.phases.size(); ++c)
        EXPECT_DOUBLE_EQ(plan.phases[3 * c + 1].result_bytes, dw_bytes * (c > 0 ? 2 : 1));
    }
  }
  expect_consistent({Products{8192}}, h200, 2 * ndv(8192, 8192, 8192));
  for (double period_ms : {0.01, 1.0, 7.0, 50.0, 2000.0}) {
    for (auto gap : {Gap::kIdle, Gap::kMemory}) {
      const Square sq{period_ms, 0.3, gap};
      expect_consistent({sq}, h200, size_square(sq, h200).burst_flops());
    }
  }
}

// With the exponent in the product, its epilogue holds a narrow head's logits product below the
// product's own rate (the H200: 1.23x cuBLASLt's product at D = 896), a wide one's not at all.
TEST(Steps, TheExponentInTheProductSlowsANarrowHeadsLogitsProductAlone) {
  const LmHeadStep logits{LmHeadStep::kLogits, 0, 0, 16384};
  for (int64_t d : {896, 4096}) {
    LmHead l{16384, d, 151936};
    const Phase pass = phase_of(logits, l);
    l.exp_in_product = true;
    const Phase fused = phase_of(logits, l);
    EXPECT_DOUBLE_EQ(fused.flops, pass.flops);
    if (d == 896) {
      EXPECT_NEAR(pass.efficiency / fused.efficiency, 1.23, 0.01);
    } else {
      EXPECT_DOUBLE_EQ(fused.efficiency, pass.efficiency);
    }
  }
}

TEST(Steps, TheLmHeadChunksTokensOrTakesTokensPerChunk) {
  LmHeadOptions o;
  o.chunks = 3;
  std::vector<int64_t> rows;
  lmhead_steps(1000, o, false, [&](const LmHeadStep& s) {
    if (s.kind == LmHeadStep::kLogits) rows.push_back(s.rows);
  });
  EXPECT_EQ(rows, (std::vector<int64_t>{334, 334, 332}));
  o.tokens_per_chunk = 400;
  rows.clear();
  lmhead_steps(1000, o, false, [&](const LmHeadStep& s) {
    if (s.kind == LmHeadStep::kLogits) rows.push_back(s.rows);
  });
  EXPECT_EQ(rows, (std::vector<int64_t>{400, 400, 200}));
  o.tokens_per_chunk = 0;
  o.chunks = 0;
  EXPECT_THROW(lmhead_steps(1000, o, false, [](const LmHeadStep&) {}), powershape::Error);
}

// A bias's gradient is summed once a chunk, after the pass has written dlogits and before the
// next chunk's logits overwrite them; only in the backward pass.
TEST(Steps, TheBiasGradientIsSummedOnceAChunkAfterThePass) {
  LmHeadOptions o;
  o.chunks = 3;
  int sums = 0;
  auto last = LmHeadStep::kCountValid;  // the last of logits and pass seen
  lmhead_steps(1000, o, true, [&](const LmHeadStep& s) {
    if (s.kind == LmHeadStep::kLogits || s.kind == LmHeadStep::kPass) last = s.kind;
    if (s.kind != LmHeadStep::kDbias) return;
    ++sums;
    EXPECT_EQ(last, LmHeadStep::kPass) << "chunk " << s.chunk;
  });
  EXPECT_EQ(sums, 3);
  o.backward = false;
  sums = 0;
  lmhead_steps(1000, o, true, [&](const LmHeadStep& s) { sums += s.kind == LmHeadStep::kDbias; });
  EXPECT_EQ(sums, 0);
}

// Without a chunk count the op takes the fewest chunks of at most 0.5 GiB of logits, each of at
// least 1024 tokens.
TEST(Steps, TheDefaultChunkCountKeepsALogitsChunkNearHalfAGib) {
  EXPECT_EQ(lmhead_default_chunks(16384, 151936), 10);  // 1639 tokens: 0.46 GiB
  EXPECT_EQ(lmhead_default_chunks(4096, 128256), 2);
  EXPECT_EQ(lmhead_default_chunks(16384, 128256), 8);
  EXPECT_EQ(lmhead_default_chunks(1000, 262144), 1);   // never under 1024 tokens a chunk
  EXPECT_EQ(lmhead_default_chunks(4096, 1 << 21), 4);  // 1024 tokens of 4 MiB rows
  for (int64_t n : {1, 1000, 16384, 131072}) {
    for (int64_t v : {32000, 151936, 262144}) {
      const LmHeadOptions o = lmhead_resolved(LmHeadOptions{}, n, v);
      const int64_t rows = lmhead_rows_per_chunk(n, o);
      EXPECT_TRUE(rows * v * 2 <= (int64_t{512} << 20) || rows <= 1024) << n << "x" << v;
      EXPECT_EQ(o.chunks, lmhead_default_chunks(n, v));
    }
  }
  LmHeadOptions given;
  given.chunks = 3;
  EXPECT_EQ(lmhead_resolved(given, 16384, 151936).chunks, 3);
  given.chunks = 0;
  given.tokens_per_chunk = 100;
  EXPECT_EQ(lmhead_resolved(given, 16384, 151936).chunks, 0);
}

TEST(Steps, ACustomPlanHasNoKernels) {
  EXPECT_THROW(workload_steps(Workload{Custom{}}, {1e15, 1e12}, [](const WorkloadStep&) {}),
               powershape::Error);
}

}  // namespace
}  // namespace powershape::workload
