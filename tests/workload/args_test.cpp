#include "powershape/workload/args.hpp"

#include <gtest/gtest.h>

#include "powershape/util/error.hpp"

namespace powershape::workload {

// repro and tune take a fine-tune or a kind --chunks splits; any other is refused, naming the
// workload and the kinds that are chunked.
TEST(Args, RefusesAWorkloadThatIsNeitherChunkedNorAFineTune) {
  WorkloadArgs a;
  a.workload = "finetune:qwen2-0.5b";
  EXPECT_TRUE(chunked_or_finetune(a));
  for (const auto& k : kind_names(true)) {
    a.workload = k;
    EXPECT_FALSE(chunked_or_finetune(a)) << k;
  }
  a.workload = "square";
  try {
    chunked_or_finetune(a);
    FAIL() << "square is not chunked";
  } catch (const Error& e) {
    EXPECT_EQ(e.subject(), "workload");
    EXPECT_NE(e.detail().find(kind_list(true)), std::string::npos) << e.detail();
    EXPECT_NE(e.detail().find("'square'"), std::string::npos) << e.detail();
  }
}

}  // namespace powershape::workload
