#include "powershape/experiment/smooth_run.hpp"

#include <gtest/gtest.h>

#include <string>

#include "powershape/util/error.hpp"

namespace powershape::experiment {

// The spec and the floor are read before the GPU is opened: a bad one is named, with no driver
// asked for (this holds on a machine with no GPU as on one with).
TEST(SmoothRun, TheSpecAndTheFloorAreReadBeforeTheGpu) {
  SmoothRequest q;
  q.command = {"true"};
  q.floor = "60%";
  q.spec = "no-such-spec";
  try {
    smooth(q, {});
    ADD_FAILURE() << "a spec that is not there was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("no-such-spec"), std::string::npos) << e.what();
  }
  q.spec = analysis::kDefaultGridSpec;
  q.floor = "60 watts";
  try {
    smooth(q, {});
    ADD_FAILURE() << "a bad floor was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(e.subject(), "floor") << e.what();
  }
}

}  // namespace powershape::experiment
