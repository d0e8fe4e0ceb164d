#include "powershape/workload/lmhead_workspace.hpp"

#include <gtest/gtest.h>

#include <string>

#include "error_of.hpp"

namespace powershape::workload {
namespace {

// One chunk of Qwen2's head: the chunk's bf16 logits (rows padded to 8), three floats a token, one
// a row, the count, and the exponent path's two floats a row and a float2 a row a 256-logit tile,
// each part on 256 bytes.
TEST(LmHeadWorkspace, OneChunkHoldsEachPartOnItsOwn256Bytes) {
  LmHeadOptions o;
  o.chunks = 1;
  const auto l = lmhead_layout(16384, 896, 151936, o);
  EXPECT_EQ(l.ld, 151936);
  EXPECT_EQ(l.rows, 16384);
  EXPECT_EQ(l.logits, 0u);
  EXPECT_EQ(l.token_loss, std::size_t{16384} * 151936 * 2);
  EXPECT_EQ(l.token_zloss - l.token_loss, 16384u * 4);
  EXPECT_EQ(l.exp_scratch % 256, 0u);
  EXPECT_EQ(l.total - l.exp_scratch, 2 * 16384u * 4 + 16384u * 594 * 8);  // 594 tiles of 256
  EXPECT_EQ(lmhead_exp_scratch_bytes(16384, 151936), 2 * 16384u * 4 + 16384u * 594 * 8);
  o.fuse_exp = false;
  EXPECT_EQ(lmhead_layout(16384, 896, 151936, o).total, l.exp_scratch);
}

// Sizes that would wrap the arithmetic around are refused, named: N = 2^62 once gave a few
// hundred bytes; the largest sizes taken in one chunk need more bytes than memory addresses.
TEST(LmHeadWorkspace, SizesThatWouldWrapAroundAreRefused) {
  LmHeadOptions o;
  o.chunks = 1;
  const auto error = [&](int64_t n, int64_t d, int64_t v) {
    return testing::error_of([&] { lmhead_layout(n, d, v, o); });
  };
  EXPECT_EQ(error(int64_t{1} << 62, 896, 151936),
            "lmhead: N = 4611686018427387904 must be 1 to 2^40");
  EXPECT_EQ(error(0, 896, 151936), "lmhead: N = 0 must be 1 to 2^40");
  EXPECT_EQ(error(16, -8, 151936), "lmhead: D = -8 must be 1 to 2^20");
  EXPECT_EQ(error(16, 896, int64_t{1} << 31), "lmhead: V = 2147483648 must be 1 to 2^31 - 1");
  EXPECT_EQ(error(kLmHeadMaxN, 896, kLmHeadMaxV),
            "lmhead: the workspace for these N and V is larger than memory can address");
  o.chunks = -1;
  EXPECT_NE(error(16, 8, 8).find("chunks"), std::string::npos);
  // In chunks of 1,024 tokens the largest N still fits: its per-token parts are 4 TiB each.
  o.chunks = 0;
  o.tokens_per_chunk = 1024;
  EXPECT_GT(lmhead_layout(kLmHeadMaxN, 896, 151936, o).total, std::size_t{3} << 42);
}

}  // namespace
}  // namespace powershape::workload
