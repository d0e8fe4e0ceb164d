#include "powershape/experiment/reference_figures.hpp"

#include <gtest/gtest.h>

#include "powershape/workload/args.hpp"
#include "powershape/workload/workload.hpp"

namespace powershape::experiment {
namespace {

// The key a command looks a figure up by, as repro and advise form it from their options.
std::string key_of(const std::string& kind, const std::string& shape) {
  workload::WorkloadArgs a;
  a.workload = kind;
  a.shape = shape;
  return workload::kind_name_of(workload::describe(a, 1));
}

TEST(ReferenceFigures, TheH200sMeasuredChunkCountsAreFoundByTheWorkloadsOwnName) {
  EXPECT_NE(measured_figure("h200", key_of("msm", ""), Question::kChunks).find("four H200s"),
            std::string::npos);
  const std::string lmhead =
      measured_figure("h200", key_of("lmhead", "131072,896,151936"), Question::kChunks);
  EXPECT_NE(lmhead.find("8 chunks 1.0-2.1% faster"), std::string::npos) << lmhead;
  EXPECT_NE(measured_figure("h200", key_of("lmhead", ""), Question::kChunks).find("4 chunks 2.8%"),
            std::string::npos);
}

TEST(ReferenceFigures, TheH200sMeasuredSettingIsFoundForAdvisesDefaultWorkload) {
  const std::string s = measured_figure("h200", key_of("lmhead", ""), Question::kSetting);
  EXPECT_NE(s.find("power limit 640 W"), std::string::npos) << s;
}

TEST(ReferenceFigures, NothingIsSaidWhereNothingWasMeasured) {
  EXPECT_EQ(measured_figure("h200", key_of("lmhead", "4096,896,151936"), Question::kChunks), "");
  EXPECT_EQ(measured_figure("h200", key_of("lmhead", "4096,4096,128256"), Question::kSetting), "");
  EXPECT_EQ(measured_figure("h200", key_of("msm", ""), Question::kSetting), "");
  EXPECT_EQ(measured_figure("l40s", key_of("msm", ""), Question::kChunks), "");
  EXPECT_EQ(paper_figure("h200", "msm"), "");
  EXPECT_NE(paper_figure("dgx-spark", "finetune:qwen2-0.5b").find("20% faster"), std::string::npos);
}

}  // namespace
}  // namespace powershape::experiment
