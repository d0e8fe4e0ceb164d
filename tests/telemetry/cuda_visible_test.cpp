#include "powershape/telemetry/cuda_visible.hpp"

#include <gtest/gtest.h>

#include "error_of.hpp"

namespace powershape::telemetry {

const std::vector<std::string> kUuids = {"GPU-aaaa-1", "GPU-aaab-2", "GPU-bbbb-3", "GPU-cccc-4"};

// As CUDA reads it: indices and UUIDs (or a prefix only one GPU has), in the order given, up to
// the first entry that names no GPU (a bad index, an unknown or shared prefix, a repeat).
TEST(CudaVisible, IndicesAndUuidsUpToTheFirstThatNamesNoGpu) {
  EXPECT_FALSE(cuda_visible(nullptr, kUuids).has_value());
  EXPECT_EQ(*cuda_visible("2,0", kUuids), (std::vector<int>{2, 0}));
  EXPECT_EQ(*cuda_visible("GPU-cccc-4, GPU-bbbb", kUuids), (std::vector<int>{3, 2}));
  EXPECT_EQ(*cuda_visible("1,7,0", kUuids), (std::vector<int>{1}));
  EXPECT_EQ(*cuda_visible("3,GPU-aaa,0", kUuids), (std::vector<int>{3}));  // a shared prefix
  EXPECT_EQ(*cuda_visible("1,1,2", kUuids), (std::vector<int>{1}));
}

// Nothing visible is no GPU to watch: said, with what would name one.
TEST(CudaVisible, NamingNoneIsRefused) {
  for (const char* v : {"", "-1", "4", "MIG-1234", "x"}) {
    EXPECT_NE(testing::error_of([&] {
                cuda_visible(v, kUuids);
              }).find("names none of the 4 GPUs NVML sees"),
              std::string::npos)
        << v;
  }
}

}  // namespace powershape::telemetry
