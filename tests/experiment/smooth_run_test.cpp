#include "powershape/experiment/smooth_run.hpp"

#include <gtest/gtest.h>

#include <string>

#include "error_of.hpp"

namespace powershape::experiment {

// The spec and the floor are read before the GPU is opened: a bad one is named. (On a machine with
// no driver, as CI's, a GPU opened first would be refused as unsupported instead.)
TEST(SmoothRun, TheSpecAndTheFloorAreReadBeforeTheGpu) {
  SmoothRequest q;
  q.command = {"true"};
  q.floor = "60%";
  q.spec = "no-such-spec";
  EXPECT_NE(testing::error_of([&] { smooth(q, {}); }).find("no-such-spec"), std::string::npos);
  q.spec = analysis::kDefaultGridSpec;
  q.floor = "60 watts";
  EXPECT_EQ(testing::refused_for([&] { smooth(q, {}); }), "floor");
}

}  // namespace powershape::experiment
