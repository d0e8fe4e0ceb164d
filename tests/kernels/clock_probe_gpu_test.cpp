#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "powershape/kernels/clock_probe.hpp"

namespace powershape::kernels {

TEST(ClockProbeGpu, SeesAClockWithinTheDevicesRange) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA GPU";
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ClockProbe probe(2000);
  probe.start(s, 20'000'000);  // 20 ms in 10 us bins
  auto mhz = probe.mhz();
  ASSERT_EQ(mhz.size(), 2000u);
  int seen = 0;
  for (double f : mhz) {
    if (f == 0) continue;
    ++seen;
    EXPECT_GT(f, 100);
    EXPECT_LT(f, 3000);
  }
  EXPECT_GT(seen, 1000);  // most 10 us bins resolved a clock
  cudaStreamDestroy(s);
}

}  // namespace powershape::kernels
