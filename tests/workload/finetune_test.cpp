#include "powershape/workload/finetune.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace powershape::workload {
namespace {

double flops_of(const Plan& p, const std::string& name, int* count = nullptr) {
  double f = 0;
  for (const auto& ph : p.phases) {
    if (ph.name != name) continue;
    f += ph.flops;
    if (count != nullptr) ++*count;
  }
  return f;
}

double bytes_of(const Plan& p, const std::string& name) {
  double b = 0;
  for (const auto& ph : p.phases)
    if (ph.name == name) b += ph.bytes;
  return b;
}

}  // namespace

TEST(Finetune, TheLmHeadInChunksDoesTheSameWorkAndRereadsItsGradient) {
  Finetune f = parse_finetune("finetune:qwen2-0.5b", "65536,1024,16");
  const Plan one = finetune_plan(f);
  f.lm_head_chunks = 3;  // 21845 + 21845 + 21846 rows
  const Plan three = finetune_plan(f);
  EXPECT_DOUBLE_EQ(three.total_flops(), one.total_flops());
  int dw = 0;
  EXPECT_DOUBLE_EQ(flops_of(three, "lm_head_dw", &dw), 2.0 * 151936 * 896 * 65536);
  EXPECT_EQ(dw, 3);
  EXPECT_EQ(three.phases.size(), one.phases.size() + 2 * 4);
  // Each chunk's dW product reads and writes the fp32 gradient (151936 x 896 x 4 B x 2) again.
  EXPECT_NEAR(bytes_of(three, "lm_head_dw") - bytes_of(one, "lm_head_dw"), 2 * 151936.0 * 896 * 8,
              1);
  EXPECT_NE(three.name.find("lm_head_chunks=3"), std::string::npos);
  f.lm_head_chunks = 65537;
  EXPECT_THROW(finetune_plan(f), std::runtime_error);
}

}  // namespace powershape::workload
