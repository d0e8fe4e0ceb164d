// The simulator's plans against the kernels the GPU runs, in the spirit of ggml's
// test-backend-ops: for every workload kind and chunk counts 1..64, the kernels GpuWorkload and
// the LM head op would launch (listed without a GPU) and the plan's phases agree in count, flops
// and bytes, every kernel the op launches included (the dW accumulation reads and writes its
// result from the second chunk on).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "powershape/kernels/step_kernels.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::kernels {
namespace {

using workload::PhaseKind;

// What one launch does, in the plan's terms.
struct Launch {
  std::string phase;
  PhaseKind kind;
  double flops = 0, bytes = 0, seconds = 0;
};

// A kernel as step_kernels.hpp labels it (what probe --record times), in the plan's terms.
Launch launch_of(const workload::KernelTime& k) {
  const double m = static_cast<double>(k.m), n = static_cast<double>(k.n),
               kk = static_cast<double>(k.k);
  if (k.m > 0) return {k.name, PhaseKind::kCompute, 2 * m * n * kk, k.bytes};
  return {k.name, PhaseKind::kMemory, 0, k.bytes};
}

std::vector<Launch> launches(const workload::Workload& w, const workload::Rates& r) {
  std::vector<Launch> out;
  workload_steps(w, r, [&](const WorkloadStep& s) {
    if (s.kind == WorkloadStep::kSpin) {
      out.push_back({s.phase, PhaseKind::kIdle, 0, 0, s.seconds});
    } else if (s.kind == WorkloadStep::kLmHead) {
      const auto& l = std::get<workload::LmHead>(w.kind);
      lmhead_steps(l.tokens, lmhead_options(l, w.chunks), false,
                   [&](const LmHeadStep& x) { out.push_back(launch_of(kernel_of(x, l))); });
    } else {
      out.push_back(launch_of(kernel_of(s)));
    }
  });
  return out;
}

// Launches of one plan phase follow each other (a square wave's burst is several products).
std::vector<Launch> merged(const std::vector<Launch>& in) {
  std::vector<Launch> out;
  for (const auto& l : in) {
    if (!out.empty() && out.back().phase == l.phase && l.phase == "burst") {
      out.back().flops += l.flops;
      out.back().bytes += l.bytes;
    } else {
      out.push_back(l);
    }
  }
  return out;
}

void expect_agree(const workload::Workload& w, const workload::Rates& r) {
  const workload::Plan plan = workload::make_plan(w, r);
  const auto gpu = merged(launches(w, r));
  ASSERT_EQ(gpu.size(), plan.phases.size()) << plan.name;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    const auto& ph = plan.phases[i];
    EXPECT_EQ(gpu[i].phase, ph.name) << plan.name << " phase " << i;
    EXPECT_EQ(gpu[i].kind, ph.kind) << plan.name << " phase " << i;
    EXPECT_DOUBLE_EQ(gpu[i].flops, ph.flops) << plan.name << " phase " << i;
    EXPECT_DOUBLE_EQ(gpu[i].bytes, ph.bytes) << plan.name << " phase " << i;
    EXPECT_DOUBLE_EQ(gpu[i].seconds, ph.seconds) << plan.name << " phase " << i;
  }
}

TEST(Steps, EveryKindsKernelsMatchItsPlanAtEveryChunkCount) {
  const workload::Rates h200{989e12, 4.0e12};
  for (int chunks = 1; chunks <= 64; ++chunks) {
    for (const auto& l :
         {workload::LmHead{16384, 896, 151936}, workload::LmHead{4096, 4096, 128256},
          workload::LmHead{1000, 64, 1003, false}, workload::LmHead{131072, 896, 151936}}) {
      expect_agree({l, chunks}, h200);
    }
    expect_agree({workload::Msm{65536, 512, 65536}, chunks}, h200);
    expect_agree({workload::Msm{1000, 64, 1024}, chunks}, h200);
  }
  for (int chunks : {1, 2, 3, 7, 64})
    expect_agree({workload::LmHead{16384, 896, 151936, true, 4, true}, chunks}, h200);
  // dW in fp32, the op's and the products' alone.
  for (int chunks : {1, 2, 3, 7, 64}) {
    workload::LmHead l{16384, 896, 151936};
    l.dw_bytes = 4;
    expect_agree({l, chunks}, h200);
    l.products_only = true;
    expect_agree({l, chunks}, h200);
  }
  expect_agree({workload::Products{8192}}, h200);
  for (double period_ms : {0.01, 1.0, 7.0, 50.0, 2000.0}) {
    for (auto gap : {workload::Gap::kIdle, workload::Gap::kMemory}) {
      expect_agree({workload::Square{period_ms, 0.3, gap}}, h200);
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
  EXPECT_THROW(workload_steps(workload::Workload{workload::Custom{}}, {1e15, 1e12},
                              [](const WorkloadStep&) {}),
               powershape::Error);
}

}  // namespace
}  // namespace powershape::kernels
