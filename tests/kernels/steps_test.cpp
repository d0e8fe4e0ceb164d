// The simulator's plans against the kernels the GPU runs, in the spirit of ggml's
// test-backend-ops: for every workload kind and chunk counts 1..64, the kernels GpuWorkload and
// the LM head op would launch (listed without a GPU) and the plan's phases agree in count, flops
// and bytes.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "powershape/kernels/lmhead_steps.hpp"
#include "powershape/kernels/workload_steps.hpp"
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

double product_flops(double m, double n, double k) { return 2 * m * n * k; }

// Kernels the plans leave out for now (the simulator v2 issue adds them): they move a few bytes a
// token, or X's rows (2 x 2 x D bytes a token) for the one-read pass's row factors.
const std::set<std::string> kUnplanned = {"count_valid", "scale_rows", "reduce", "dbias"};

std::vector<Launch> lmhead_launches(const workload::LmHead& l, int chunks) {
  std::vector<Launch> out;
  LmHeadOptions o;
  o.chunks = chunks;
  o.backward = l.backward;
  const double d = static_cast<double>(l.width), v = static_cast<double>(l.vocab);
  lmhead_steps(l.tokens, o, false, [&](const LmHeadStep& s) {
    const double rows = static_cast<double>(s.rows);
    switch (s.kind) {
      case LmHeadStep::kCountValid:
        out.push_back({"count_valid", PhaseKind::kMemory, 0, 4 * rows});
        break;
      case LmHeadStep::kLogits:
        out.push_back({"logits", PhaseKind::kCompute, product_flops(rows, v, d)});
        break;
      // The one-read pass reads each bf16 logit once and writes its gradient in place.
      case LmHeadStep::kPass:
        out.push_back({"cross_entropy", PhaseKind::kMemory, 0, 4 * rows * v});
        break;
      case LmHeadStep::kScaleX:
      case LmHeadStep::kScaleDx:
        out.push_back({"scale_rows", PhaseKind::kMemory, 0, 4 * rows * d});
        break;
      case LmHeadStep::kDbias:  // a bias's gradient: the chunk's dlogits read once more
        out.push_back({"dbias", PhaseKind::kMemory, 0, 2 * rows * v});
        break;
      case LmHeadStep::kDw:
        out.push_back({"dw", PhaseKind::kCompute, product_flops(v, d, rows)});
        break;
      case LmHeadStep::kDx:
        out.push_back({"dx", PhaseKind::kCompute, product_flops(rows, d, v)});
        break;
      case LmHeadStep::kReduce:
        out.push_back({"reduce", PhaseKind::kMemory, 0, 4 * rows});
        break;
    }
  });
  return out;
}

std::vector<Launch> launches(const workload::Workload& w, const workload::Rates& r) {
  std::vector<Launch> out;
  workload_steps(w, r, [&](const WorkloadStep& s) {
    switch (s.kind) {
      case WorkloadStep::kProduct:
        out.push_back({s.phase, PhaseKind::kCompute,
                       product_flops(static_cast<double>(s.m), static_cast<double>(s.n),
                                     static_cast<double>(s.k))});
        break;
      case WorkloadStep::kSoftmax:
      case WorkloadStep::kStream:
        out.push_back({s.phase, PhaseKind::kMemory, 0, s.bytes});
        break;
      case WorkloadStep::kSpin:
        out.push_back({s.phase, PhaseKind::kIdle, 0, 0, s.seconds});
        break;
      case WorkloadStep::kLmHead: {
        auto l = lmhead_launches(std::get<workload::LmHead>(w.kind), w.chunks);
        out.insert(out.end(), l.begin(), l.end());
        break;
      }
    }
  });
  return out;
}

// Launches of one plan phase follow each other (a square wave's burst is several products):
// merge them, and set aside the kernels the plans leave out.
std::vector<Launch> merged(const std::vector<Launch>& in, std::vector<Launch>* unplanned) {
  std::vector<Launch> out;
  for (const auto& l : in) {
    if (kUnplanned.count(l.phase) != 0) {
      unplanned->push_back(l);
    } else if (!out.empty() && out.back().phase == l.phase && l.phase == "burst") {
      out.back().flops += l.flops;
    } else {
      out.push_back(l);
    }
  }
  return out;
}

void expect_agree(const workload::Workload& w, const workload::Rates& r) {
  const workload::Plan plan = workload::make_plan(w, r);
  std::vector<Launch> unplanned;
  const auto gpu = merged(launches(w, r), &unplanned);
  ASSERT_EQ(gpu.size(), plan.phases.size()) << plan.name;
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    const auto& ph = plan.phases[i];
    EXPECT_EQ(gpu[i].phase, ph.name) << plan.name << " phase " << i;
    EXPECT_EQ(gpu[i].kind, ph.kind) << plan.name << " phase " << i;
    EXPECT_DOUBLE_EQ(gpu[i].flops, ph.flops) << plan.name << " phase " << i;
    EXPECT_DOUBLE_EQ(gpu[i].bytes, ph.bytes) << plan.name << " phase " << i;
    EXPECT_DOUBLE_EQ(gpu[i].seconds, ph.seconds) << plan.name << " phase " << i;
  }
  // What the plan leaves out is small beside what it has: at most 7% of the bytes at D = 4096.
  double planned = 0, left_out = 0;
  for (const auto& ph : plan.phases) planned += ph.bytes;
  for (const auto& l : unplanned) left_out += l.bytes;
  EXPECT_LE(left_out, 0.07 * planned + 1e4) << plan.name;
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
  expect_agree({workload::LmHead{16384, 896, 151936, true, 4, true}, 1}, h200);
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
  EXPECT_THROW(lmhead_steps(1000, o, false, [](const LmHeadStep&) {}), std::invalid_argument);
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

TEST(Steps, ACustomPlanHasNoKernels) {
  EXPECT_THROW(workload_steps(workload::Workload{workload::Custom{}}, {1e15, 1e12},
                              [](const WorkloadStep&) {}),
               std::invalid_argument);
}

}  // namespace
}  // namespace powershape::kernels
