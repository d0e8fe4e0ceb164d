#include "powershape/workload/kernel_time.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "error_of.hpp"

namespace powershape::workload {
namespace {

std::vector<KernelTime> parse(const std::string& text) {
  std::istringstream in(text);
  return read_kernel_times(in, "k.csv");
}

const char* kHeader = "config,index,name,m,n,k,bytes,ms,sm_clock_mhz,real_mhz\n";

TEST(KernelTime, RoundTrips) {
  KernelTime a{"lmhead 16x8x32 chunks=2", 3, "dw", 32, 8, 16, 4096, 0.125, 1515};
  KernelTime b{"msm 8x8x8 chunks=1", 1, "softmax", 0, 0, 0, 256, 0.5, 1980, 1702.5};
  const std::string path = ::testing::TempDir() + "/kernels.csv";
  write_kernel_times(path, {a, b});
  const auto back = read_kernel_times(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].config, a.config);
  EXPECT_EQ(back[0].name, "dw");
  EXPECT_EQ(back[0].m, 32);
  EXPECT_EQ(back[0].k, 16);
  EXPECT_DOUBLE_EQ(back[0].ms, 0.125);
  EXPECT_DOUBLE_EQ(back[1].bytes, 256);
  EXPECT_DOUBLE_EQ(back[1].sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(back[1].real_mhz, 1702.5);
  EXPECT_DOUBLE_EQ(back[0].real_mhz, 0);
}

TEST(KernelTime, ARecordingWithoutTheRealClockIsRead) {
  const auto k = parse("config,index,name,m,n,k,bytes,ms,sm_clock_mhz\nx,0,dw,1,2,3,4,1,5\n");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_DOUBLE_EQ(k[0].sm_clock_mhz, 5);
  EXPECT_DOUBLE_EQ(k[0].real_mhz, 0);
  EXPECT_EQ(testing::error_of([] {
              parse("config,index,name,m,n,k,bytes,ms,sm_clock_mhz\nx,0,dw,1,2,3,4,1,5,6\n");
            }),
            "k.csv:2: expected 9 cells, found 10");
}

TEST(KernelTime, BadFilesAreNamedByLine) {
  EXPECT_EQ(testing::error_of([] { parse(""); }),
            "k.csv:0: empty; expected the header "
            "config,index,name,m,n,k,bytes,ms,sm_clock_mhz,real_mhz");
  EXPECT_EQ(testing::error_of([] { parse("a,b\n"); }),
            "k.csv:1: expected the header config,index,name,m,n,k,bytes,ms,sm_clock_mhz,real_mhz");
  EXPECT_EQ(testing::error_of([] { parse(std::string(kHeader) + "x,0,dw,1,2\n"); }),
            "k.csv:2: expected 10 cells, found 5");
  EXPECT_EQ(testing::error_of([] { parse(std::string(kHeader) + "x,0,dw,1,2,3,4,-1,5,0\n"); }),
            "k.csv:2: ms: expected a number >= 0, found '-1'");
  EXPECT_EQ(testing::error_of([] { parse(std::string(kHeader) + "x,0,dw,1,2,3,4,0,5,0\n"); }),
            "k.csv:2: ms: a kernel takes some time");
  EXPECT_EQ(testing::error_of([] { parse(std::string(kHeader) + "x,0,dw,1.5,2,3,4,1,5,0\n"); }),
            "k.csv:2: m: expected a whole size");
  EXPECT_EQ(testing::error_of([] { parse(std::string(kHeader) + "x,0,dw,1,2,3,nan,1,5,0\n"); }),
            "k.csv:2: bytes: expected a number >= 0, found 'nan'");
}

TEST(KernelTime, ANameWithACommaIsRefusedNotQuoted) {
  EXPECT_THROW(write_kernel_times(::testing::TempDir() + "/k2.csv",
                                  {KernelTime{"a,b", 0, "dw", 1, 1, 1, 1, 1, 1}}),
               std::runtime_error);
}

}  // namespace
}  // namespace powershape::workload
