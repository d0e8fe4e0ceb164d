// The one-read cross-entropy pass's argument checks (they throw before touching the GPU, so they
// run wherever the CUDA test binary does). Its arithmetic is tested through the LM head against the
// fp64 reference (lmhead_gpu_test.cpp), which takes this pass whenever label smoothing is off.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/util/error.hpp"

namespace powershape::kernels {
namespace {

std::string message_of(void (*f)()) {
  try {
    f();
  } catch (const powershape::Error& e) {
    return e.what();
  }
  return "";
}

TEST(CrossEntropyScaled, LabelSmoothingIsRefused) {
  const std::string m = message_of([] {
    CrossEntropyParams p{};
    p.label_smoothing = 0.1f;
    cross_entropy_scaled(p, 4, nullptr);
  });
  EXPECT_NE(m.find("label smoothing needs cross_entropy"), std::string::npos) << m;
}

TEST(CrossEntropyScaled, AGradientNeedsTheRowScales) {
  const std::string m = message_of([] {
    CrossEntropyParams p{};
    p.write_grad = true;
    cross_entropy_scaled(p, 4, nullptr);
  });
  EXPECT_NE(m.find("row_scale is required"), std::string::npos) << m;
}

TEST(ScaleRows, RowsMustBeWholeVectors) {
  const std::string m = message_of([] { scale_rows(nullptr, nullptr, 2, 12, nullptr, nullptr); });
  EXPECT_NE(m.find("d must be a multiple of 8"), std::string::npos) << m;
}

}  // namespace
}  // namespace powershape::kernels
