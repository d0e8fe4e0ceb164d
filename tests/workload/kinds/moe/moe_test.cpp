#include "powershape/workload/kinds/moe/moe.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "powershape/util/error.hpp"
#include "powershape/workload/args.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::workload {
namespace {

double sum(const Plan& p, const char* name, bool bytes = false) {
  double total = 0;
  for (const auto& ph : p.phases)
    if (ph.name == name) total += bytes ? ph.bytes : ph.flops;
  return total;
}

// Each chunk routes its tokens, then each expert works its capacity, ceil(r x top-k / E) rows:
// the gate-and-up product (2F wide) and the down product, every expert's weights read once a
// chunk.
TEST(Moe, EachChunkRoutesThenEachExpertWorksItsCapacity) {
  const Moe m{16384, 4096, 8, 2, 14336};
  const double n = 16384, d = 4096, e = 8, f = 14336;
  const Plan one = make_plan({m, 1}, {});
  ASSERT_EQ(one.phases.size(), 7u);
  EXPECT_EQ(m.capacity(16384), 4096);
  EXPECT_DOUBLE_EQ(sum(one, "router"), 2 * n * e * d);
  EXPECT_DOUBLE_EQ(sum(one, "up"), 2 * n * 2 * 2 * f * d);  // 2 of the 8 experts a token
  EXPECT_DOUBLE_EQ(sum(one, "down"), 2 * n * 2 * d * f);
  EXPECT_EQ(one.phases[3].m, 8 * 4096);  // every expert's rows stacked
  EXPECT_EQ(one.phases[3].n, 2 * 14336);
  const Plan four = make_plan({m, 4}, {});
  EXPECT_DOUBLE_EQ(sum(four, "up"), sum(one, "up"));
  // The weights are read again each chunk: 4 chunks read them 4 times.
  const double weights = e * 2 * f * d * 2;
  EXPECT_NEAR(sum(four, "up", true) - sum(one, "up", true), 3 * weights, 1e-6 * weights);
  // A ragged chunk rounds its capacity up: 10 tokens of top-2 over 3 experts take 7 slots each.
  EXPECT_EQ((Moe{10, 8, 3, 2, 8}.capacity(10)), 7);
}

TEST(Moe, ItIsACommandLineWorkloadOfFiveSizes) {
  WorkloadArgs a;
  a.workload = "moe";
  const Workload w = describe(a, 4);
  EXPECT_EQ(name_of(w), "moe 16384x4096x8x2x14336 chunks=4");
  const auto back = workload_named(name_of(w));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(std::get<Moe>(back->kind).ffn, 14336);
  a.shape = "4096,2048,60,4,1408";  // Qwen1.5-MoE-A2.7B's routed experts
  EXPECT_EQ(std::get<Moe>(describe(a, 1).kind).experts, 60);
  a.shape = "4096,2048,60";
  EXPECT_THROW(describe(a, 1), Error);
  EXPECT_THROW(make_plan({Moe{64, 64, 4, 5, 64}, 1}, {}), Error);   // top-k over the experts
  EXPECT_THROW(make_plan({Moe{64, 64, 4, 2, 64}, 65}, {}), Error);  // more chunks than tokens
  EXPECT_FALSE(workload_named("moe 64x64x4x2 chunks=1").has_value());
}

// By hand, D = F = 1: token t's router logits are x_t * router_e; its expert's output is
// w2 * silu(gate * x) * (up * x), weighed by the softmax over its top-k logits.
TEST(MoeReference, TheTopKExpertsWeighedByTheirSoftmax) {
  const Moe m{1, 1, 3, 2, 1};
  const std::vector<float> x{1}, router{0, 2, std::log(3.0f) + 2}, w1{1, 1, 2, 1, 3, 1},
      w2{5, 7, 11};
  const auto silu = [](double g) { return g / (1 + std::exp(-g)); };
  // Experts 2 and 1 chosen (logits 2 + ln 3 and 2): weights 3/4 and 1/4.
  const double want = 0.75 * 11 * silu(3) + 0.25 * 7 * silu(2);
  EXPECT_NEAR(moe_layer(m, 1, x, router, w1, w2)[0], want, 1e-6);  // ln 3 as a float
}

// An expert past its capacity drops the tokens that come after: four tokens all routed to
// expert 0 of 2 with top-1 fill its 2 slots with the first two.
TEST(MoeReference, AnExpertPastItsCapacityDropsLaterTokens) {
  const Moe m{4, 1, 2, 1, 1};
  const std::vector<float> x{1, 1, 1, 1}, router{1, 0}, w1{1, 1, 1, 1}, w2{1, 1};
  const auto out = moe_layer(m, 1, x, router, w1, w2);
  EXPECT_GT(out[0], 0);
  EXPECT_GT(out[1], 0);
  EXPECT_EQ(out[2], 0);
  EXPECT_EQ(out[3], 0);
  // In two chunks each chunk has its own capacity (1 slot an expert): tokens 0 and 2 pass.
  const auto two = moe_layer(m, 2, x, router, w1, w2);
  EXPECT_GT(two[2], 0);
  EXPECT_EQ(two[1], 0);
  EXPECT_THROW(moe_layer(m, 1, x, router, w1, {1}), Error);
}

}  // namespace
}  // namespace powershape::workload
