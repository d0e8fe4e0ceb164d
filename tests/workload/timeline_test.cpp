#include "powershape/workload/timeline.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "error_of.hpp"

namespace powershape::workload {
namespace {

Plan parse(const std::string& text) {
  std::istringstream in(text);
  return plan_from_timeline(in, "t.csv", 1e15, 1e12);
}

std::string error_of(const std::string& text) {
  return testing::error_of([&] { parse(text); });
}

}  // namespace

TEST(Timeline, ReadsAnNsightExportIntoPhases) {
  Plan p = parse(
      "\"Start (ns)\",\"Duration (ns)\",\"CorrId\",\"Name\"\n"
      "1000,2000,1,\"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64\"\n"
      "3000,500,2,\"softmax_kernel<float, 1024>(float*, int)\"\n"
      "4500,1000,3,\"ampere_bf16_s16816gemm_bf16_128x128\"\n");
  ASSERT_EQ(p.phases.size(), 4u);
  EXPECT_EQ(p.phases[0].kind, PhaseKind::kCompute);
  EXPECT_DOUBLE_EQ(p.phases[0].flops, 2e-6 * 1e15);
  EXPECT_EQ(p.phases[1].kind, PhaseKind::kMemory);
  EXPECT_DOUBLE_EQ(p.phases[1].bytes, 0.5e-6 * 1e12);
  EXPECT_EQ(p.phases[2].kind, PhaseKind::kIdle);  // 3500 .. 4500
  EXPECT_DOUBLE_EQ(p.phases[2].seconds, 1e-6);
  EXPECT_EQ(p.phases[3].kind, PhaseKind::kCompute);
}

TEST(Timeline, OverlappingKernelsLeaveNoGapAndOrderIsByStart) {
  Plan p = parse("start_ns,duration_ns,name\n100,50,copy\n0,200,gemm\n");
  ASSERT_EQ(p.phases.size(), 2u);
  EXPECT_EQ(p.phases[0].name, "gemm");
  EXPECT_EQ(p.phases[1].name, "copy");
}

TEST(Timeline, MalformedRowsAreNamed) {
  EXPECT_EQ(error_of("a,b\n1,2\n").rfind("t.csv:1: expected a header", 0), 0u);
  EXPECT_EQ(error_of("start_ns,duration_ns,name\n5,x,k\n"),
            "t.csv:2: column 2: expected a non-negative integer, found 'x'");
  EXPECT_EQ(error_of("start_ns,duration_ns,name\n"), "t.csv:1: no kernels");
}

// Recorded timestamps may be anywhere in int64_t: near its end they are read without overflow
// (UBSan checks the sums), and a timeline spanning more than a day is refused, not simulated.
TEST(Timeline, TimesNearTheEndOfInt64AndLongSpans) {
  const Plan p = parse(
      "start_ns,duration_ns,name\n9223372036854770000,1000,gemm_a\n9223372036854775000,800,k\n");
  ASSERT_EQ(p.phases.size(), 3u);  // a, the gap, k
  EXPECT_DOUBLE_EQ(p.phases[1].seconds, 4000e-9);
  EXPECT_NE(error_of("start_ns,duration_ns,name\n0,100,a\n9223372036854775000,100,b\n")
                .find("more than a day"),
            std::string::npos);
  EXPECT_NE(
      error_of("start_ns,duration_ns,name\n0,9000000000000000000,a\n").find("more than a day"),
      std::string::npos);
}

// Line ends of any kind: CR alone (old Mac exports) reads as CRLF and LF do.
TEST(Timeline, AnyLineEnds) {
  EXPECT_EQ(parse("start_ns,duration_ns,name\r0,100,gemm\r200,100,k\r").phases.size(), 3u);
  EXPECT_EQ(parse("start_ns,duration_ns,name\r\n0,100,gemm\r\n200,100,k\r\n").phases.size(), 3u);
}

}  // namespace powershape::workload
