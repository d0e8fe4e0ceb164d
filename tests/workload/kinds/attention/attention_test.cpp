#include "powershape/workload/kinds/attention/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "powershape/util/error.hpp"
#include "powershape/workload/args.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::workload {
namespace {

double flops(const Plan& p, const char* name) {
  double f = 0;
  for (const auto& ph : p.phases)
    if (ph.name == name) f += ph.flops;
  return f;
}

// Causal: a chunk of r queries from row0 takes the keys [0, row0 + r). At one chunk the products
// are the whole SEQ^2 square (its masked half too); chunked, they approach the causal half.
TEST(Attention, ChunksTakeTheKeysUpToTheirLastQuery) {
  const Attention a{4096, 32, 128};
  const double s = 4096, h = 32, d = 128;
  const Plan one = make_plan({a, 1}, {});
  EXPECT_DOUBLE_EQ(flops(one, "qk"), 2 * h * s * s * d);
  EXPECT_DOUBLE_EQ(flops(one, "pv"), 2 * h * s * s * d);
  const Plan four = make_plan({a, 4}, {});
  // Chunks of 1024 queries see 1024, 2048, 3072, 4096 keys: 10 / 16 of the square.
  EXPECT_DOUBLE_EQ(flops(four, "qk"), 2 * h * s * s * d * 10 / 16);
  ASSERT_EQ(four.phases.size(), 12u);
  EXPECT_EQ(four.phases[3].name, "qk");
  EXPECT_EQ(four.phases[3].m, 32 * 1024);  // every head's rows
  EXPECT_EQ(four.phases[3].n, 2048);
  EXPECT_EQ(four.phases[3].k, 128);
  // The softmax reads every head's rows of its keys three times and writes them once.
  EXPECT_DOUBLE_EQ(four.phases[4].bytes, 2 * 2 * h * 1024 * 2048);
  EXPECT_DOUBLE_EQ(four.phases[4].reread_bytes, four.phases[4].bytes);
  // Each head reads its own K and V: the product's bytes are the heads' sum.
  EXPECT_DOUBLE_EQ(four.phases[5].bytes, h * (2 * 2048 * (1024 + 128) + 1024 * 128 * 2));
  const double causal = 2 * h * s * (s + 1) / 2 * d;
  EXPECT_NEAR(flops(make_plan({a, 4096}, {}), "qk"), causal, causal * 1e-12);
}

TEST(Attention, ItIsACommandLineWorkloadWithItsShape) {
  WorkloadArgs args;
  args.workload = "attention";
  args.chunks = "8";
  const Workload w = describe(args, 8);
  const auto& a = std::get<Attention>(w.kind);
  EXPECT_EQ(a.seq, 32768);
  EXPECT_EQ(a.heads, 32);
  EXPECT_EQ(a.head_dim, 128);
  EXPECT_EQ(name_of(w), "attention 32768x32x128 chunks=8");
  args.shape = "131072,8,64";
  EXPECT_EQ(std::get<Attention>(describe(args, 2).kind).seq, 131072);
  args.products_only = true;
  EXPECT_THROW(describe(args, 2), Error);
}

TEST(Attention, WhatCannotBePlannedIsNamed) {
  EXPECT_THROW(make_plan({Attention{16, 2, 64}, 17}, {}), Error);
  EXPECT_THROW(make_plan({Attention{16, 0, 64}, 1}, {}), Error);
  EXPECT_THROW(make_plan({Attention{16, 2, 4096}, 1}, {}), Error);
  EXPECT_FALSE(workload_named("attention 16x2x64 chunks=17").has_value());
  EXPECT_FALSE(workload_named("attention forward 16x2x64 chunks=1").has_value());
}

// By hand: the first query sees its own key alone; the second weighs keys 0 and 1 by
// exp(q . k / sqrt d), here 1 : 3 (q = 1, k = 0 and ln 3, d = 1).
TEST(AttentionReference, EachQuerySeesTheKeysUpToItself) {
  const auto o = causal_attention({1, 1}, {0, static_cast<float>(std::log(3.0))}, {2, 6}, 2, 1, 1);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_NEAR(o[0], 2, 1e-6);
  EXPECT_NEAR(o[1], 0.25 * 2 + 0.75 * 6, 1e-6);
}

// Tokens come first: [seq x heads x d]; each head attends with its own slice, scaled by
// 1 / sqrt(d) (d = 4: q . k = 4 ln 3 scaled to 2 ln 3, weights 1 : 9).
TEST(AttentionReference, HeadsAreSlicesOfEachTokensRowAndScoresAreScaled) {
  const float l = static_cast<float>(std::log(3.0));
  // seq 2, heads 2, d 4: head 0 as above but wider; head 1 all zero scores (equal weights).
  std::vector<float> q(16, 0), k(16, 0), v(16, 0);
  for (int i = 0; i < 4; ++i) {
    q[0 * 8 + i] = q[1 * 8 + i] = 1;  // head 0 of tokens 0 and 1
    k[1 * 8 + i] = l;                 // token 1's key, head 0
    v[0 * 8 + i] = 1;                 // token 0's values, head 0
    v[0 * 8 + 4 + i] = 10;            // token 0's values, head 1
    v[1 * 8 + 4 + i] = 20;            // token 1's values, head 1
  }
  const auto o = causal_attention(q, k, v, 2, 2, 4);
  EXPECT_NEAR(o[1 * 8 + 0], 1.0 / 10, 1e-6);  // token 1, head 0: weight 1/10 on token 0's 1
  EXPECT_NEAR(o[1 * 8 + 4], 15, 1e-6);        // token 1, head 1: the mean of 10 and 20
  EXPECT_NEAR(o[0 * 8 + 4], 10, 1e-6);        // token 0, head 1: its own value
}

TEST(AttentionReference, SizesThatDoNotMatchAreRefused) {
  EXPECT_THROW(causal_attention({1, 1}, {1}, {1, 1}, 2, 1, 1), Error);
  EXPECT_THROW(causal_attention({}, {}, {}, 0, 1, 1), Error);
}

}  // namespace
}  // namespace powershape::workload
