#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "powershape/kernels/gpu_filler.hpp"
#include "powershape/util/error.hpp"

namespace powershape::kernels {
namespace {

class GpuFillerGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA GPU";
  }
};

double filled_over(shape::Filler& f, double x, double seconds) {
  const double before = f.filled_s();
  f.set_intensity(x);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  return f.filled_s() - before;
}

// The filler runs products for its intensity's share of the time, and nothing at 0.
TEST_F(GpuFillerGpu, RunsItsIntensitysShareOfTheTime) {
  auto f = open_gpu_filler("");
  EXPECT_NE(f->describe().find("products of 4096x4096x4096"), std::string::npos) << f->describe();
  EXPECT_NEAR(filled_over(*f, 0.5, 0.4) / 0.4, 0.5, 0.1);
  EXPECT_NEAR(filled_over(*f, 0.2, 0.4) / 0.4, 0.2, 0.06);
  filled_over(*f, 0, 0.01);  // the period under way ends
  EXPECT_EQ(filled_over(*f, 0, 0.1), 0);
  EXPECT_TRUE(f->failure().empty());
}

TEST_F(GpuFillerGpu, AUuidNoDeviceHasIsRefused) {
  try {
    open_gpu_filler("GPU-00000000-0000-0000-0000-000000000000");
    FAIL() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("no CUDA device has the UUID"), std::string::npos);
  }
}

}  // namespace
}  // namespace powershape::kernels
