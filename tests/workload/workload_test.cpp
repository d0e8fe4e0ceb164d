#include "powershape/workload/workload.hpp"

#include <gtest/gtest.h>

#include <set>

#include "powershape/util/error.hpp"

namespace powershape::workload {
namespace {

TEST(Workload, ANameReadsBackAsTheWorkloadItNames) {
  for (const Workload& w :
       {Workload{LmHead{131072, 896, 151936}, 8}, Workload{LmHead{4096, 896, 151936, false}, 2},
        Workload{Msm{65536, 512, 65536}, 4}, Workload{LmHeadProducts{16384, 4096, 128256}, 2}}) {
    const auto back = workload_named(name_of(w));
    ASSERT_TRUE(back.has_value()) << name_of(w);
    EXPECT_EQ(name_of(*back), name_of(w));
  }
  EXPECT_EQ(name_of({LmHead{4096, 896, 151936, false}, 2}),
            "lmhead forward 4096x896x151936 chunks=2 dw=bf16");
  // A name without dw=bf16 is the op as recorded before it: dW in fp32.
  EXPECT_EQ(std::get<LmHead>(workload_named("lmhead 8x8x8 chunks=2")->kind).dw_bytes, 4);
  EXPECT_EQ(std::get<LmHead>(workload_named("lmhead 8x8x8 chunks=2 dw=bf16")->kind).dw_bytes, 2);
  EXPECT_FALSE(std::get<LmHead>(workload_named("lmhead forward 8x8x8 chunks=1")->kind).backward);
  EXPECT_TRUE(std::holds_alternative<LmHeadProducts>(
      workload_named("lmhead products 8x8x8 chunks=2")->kind));
  // Where the exponent is taken: a pass of its own unless the name says the product.
  LmHead fused{16384, 896, 151936};
  fused.exp_in_product = true;
  EXPECT_EQ(name_of({fused, 8}), "lmhead 16384x896x151936 chunks=8 dw=bf16 exp=product");
  EXPECT_TRUE(std::get<LmHead>(workload_named(name_of({fused, 8}))->kind).exp_in_product);
  EXPECT_FALSE(
      std::get<LmHead>(workload_named("lmhead 8x8x8 chunks=2 dw=bf16")->kind).exp_in_product);
  for (const char* bad :
       {"lmhead 16384x896 chunks=2", "msm 8x8x8 chunks=9", "lmhead chunks=2",
        "square 10x1x1 chunks=1", "msm products 8x8x8 chunks=1", "msm 8x8x8 chunks=0",
        "msm 8x-8x8 chunks=1", "lmhead 8x8x8 chunks=1 dw=fp16", "lmhead 8x8x8 chunks=1 dw=bf16 x",
        "lmhead products 8x8x8 chunks=1 exp=product"})
    EXPECT_FALSE(workload_named(bad).has_value()) << bad;
}

// What every kind promises (kind.hpp), held for each kind the variant lists, so that a new kind's
// folder is tested the moment it is listed: its examples plan, name themselves in a way that
// reads back (where the kind reads names), and a chunked kind refuses more chunks than it has rows.
TEST(Workload, EveryKindKeepsItsTraitsPromises) {
  int kinds = 0;
  for_each_kind([&](auto kind) {
    using K = decltype(kind);
    ++kinds;
    ASSERT_FALSE(K::examples().empty()) << K::kName;
    for (const auto& k : K::examples()) {
      for (int chunks : {1, 2}) {
        const Workload w{k, chunks};
        const std::string name = name_of(w);
        EXPECT_EQ(name.rfind(K::kName, 0), 0u) << name;
        EXPECT_NO_THROW(k.check(chunks)) << name;
        // A kind with a shape on the command line reads its own names back (a recorded result's
        // name is its workload); square waves and products name themselves for tables alone.
        const auto back = workload_named(name);
        if (K::kShape != nullptr && *K::kShape != '\0') {
          ASSERT_TRUE(back.has_value()) << name;
          EXPECT_EQ(name_of(*back), name);
        } else {
          EXPECT_FALSE(back.has_value()) << name;
        }
      }
      if constexpr (K::kChunked) EXPECT_THROW(k.check(1'000'000'000), Error) << K::kName;
    }
  });
  EXPECT_EQ(kinds, static_cast<int>(std::variant_size_v<Workload::Kinds>) - 1);  // all but Custom
  // The command line's lists: each name once, in the variant's order (a new kind joins them
  // without this test changing): the chunked ones, and with them square waves, which --chunks
  // does not split.
  const auto chunked = kind_names(true), all = kind_names(false);
  EXPECT_EQ(std::vector<std::string>(chunked.begin(), chunked.begin() + 2),
            (std::vector<std::string>{"lmhead", "msm"}));
  std::set<std::string> want(chunked.begin(), chunked.end());
  want.insert("square");
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()), want);
  EXPECT_EQ(all.size(), want.size());
  EXPECT_EQ(kind_list(true).rfind("lmhead, msm, ", 0), 0u);
  // --shape's help gives every size of each default.
  EXPECT_NE(kind_shapes().find("moe: TOKENS,D,EXPERTS,TOP_K,FFN (default 16384,4096,8,2,14336)"),
            std::string::npos)
      << kind_shapes();
}

}  // namespace
}  // namespace powershape::workload
