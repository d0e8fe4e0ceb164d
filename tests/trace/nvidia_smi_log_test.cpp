#include "powershape/trace/nvidia_smi_log.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "error_of.hpp"
#include "powershape/analysis/summary.hpp"
#include "powershape/trace/csv_reader.hpp"

namespace powershape::trace {
namespace {
using telemetry::Signal;

Trace read(const std::string& text) {
  std::istringstream first_in(text);
  std::string first;
  std::getline(first_in, first);
  std::istringstream in(text);
  return read_nvidia_smi_log(in, "log", nvidia_smi_log_kind(first));
}

}  // namespace

TEST(NvidiaSmiLog, TellsTheKindsFromTheFirstLine) {
  EXPECT_EQ(nvidia_smi_log_kind("timestamp, index, power.draw [W]"), NvidiaSmiLog::kQuery);
  EXPECT_EQ(nvidia_smi_log_kind("power.draw.instant,clocks.sm"), NvidiaSmiLog::kQuery);  // nounits
  EXPECT_EQ(nvidia_smi_log_kind("# gpu    pwr  gtemp"), NvidiaSmiLog::kDmon);
  EXPECT_EQ(nvidia_smi_log_kind("#Date       Time        gpu    pwr"), NvidiaSmiLog::kDmon);
  EXPECT_EQ(nvidia_smi_log_kind("# powershape trace v2"), NvidiaSmiLog::kNone);
  EXPECT_EQ(nvidia_smi_log_kind("t_ns,gpu,power_usage_mw"), NvidiaSmiLog::kNone);
  EXPECT_EQ(nvidia_smi_log_kind("t_s,p_mw,sm_mhz"), NvidiaSmiLog::kNone);
}

// read_csv tells a log by its first line, wherever it comes from (a file, a stream), and holds
// its readings to what a GPU can give as for any trace.
TEST(NvidiaSmiLog, ReadCsvTellsALogAndHoldsItToThePhysics) {
  std::istringstream in(
      "\n timestamp, index, power.draw [W]\n2026/12/02 23:59:59.900, 0, 80.07 W\n"
      "2026/12/03 00:00:00.000, 0, 20000.00 W\n");
  const Trace t = read_csv(in, "log");
  ASSERT_EQ(t.samples.size(), 2u);
  EXPECT_EQ(t.samples[0][Signal::kPowerUsage].value, 80'070);
  EXPECT_FALSE(t.samples[1][Signal::kPowerUsage].ok());
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_NE(t.events[0].what.find("beyond any GPU"), std::string::npos);
}

// --query-gpu with units, two GPUs interleaved, values it could not read, the header repeated.
TEST(NvidiaSmiLog, ReadsAQueryLogOfTwoGpus) {
  const Trace t = read(
      "timestamp, index, name, power.draw [W], clocks.sm [MHz], temperature.gpu, "
      "clocks_event_reasons.active, power.limit [W]\n"
      "2026/12/02 23:59:59.900, 0, NVIDIA H200, 80.07 W, 345 MHz, 38, 0x0000000000000001, 700.00 "
      "W\n"
      "2026/12/02 23:59:59.900, 1, NVIDIA H200, 81.00 W, 345 MHz, 37, 0x0000000000000001, 700.00 "
      "W\n"
      "timestamp, index, name, power.draw [W], clocks.sm [MHz], temperature.gpu, "
      "clocks_event_reasons.active, power.limit [W]\n"
      "2026/12/03 00:00:00.000, 0, NVIDIA H200, 690.50 W, 1500 MHz, 52, 0x0000000000000004, 700.00 "
      "W\n"
      "2026/12/03 00:00:00.000, 1, NVIDIA H200, [N/A], 1980 MHz, 40, 0x0000000000000000, 700.00 "
      "W\n");
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices[1].index, 1);
  EXPECT_EQ(t.devices[0].power_limit_mw.value, 700'000);
  ASSERT_EQ(t.samples.size(), 4u);
  EXPECT_EQ(t.samples[0].t_ns, 0);
  EXPECT_EQ(t.samples[2].t_ns, 100'000'000);  // across midnight
  EXPECT_EQ(t.samples[2][Signal::kPowerUsage].value, 690'500);
  EXPECT_EQ(t.samples[2][Signal::kReasons].value, 4);
  EXPECT_FALSE(t.samples[3][Signal::kPowerUsage].ok());
  EXPECT_EQ(t.samples[3][Signal::kSmClock].value, 1980);
}

TEST(NvidiaSmiLog, ReadsADmonLogWithAndWithoutTimes) {
  const Trace plain = read(
      "# gpu    pwr  gtemp  mtemp     sm    mem   mclk   pclk\n"
      "# Idx      W      C      C      %      %    MHz    MHz\n"
      "    0     85     34      -      0      0   3201    345\n"
      "    0    690     52      -    100     30   3201   1500\n");
  ASSERT_EQ(plain.samples.size(), 2u);
  EXPECT_EQ(plain.samples[1].t_ns, 1'000'000'000);  // dmon's default delay, said in an event
  ASSERT_EQ(plain.events.size(), 1u);
  EXPECT_EQ(plain.samples[1][Signal::kPowerUsage].value, 690'000);
  EXPECT_EQ(plain.samples[1][Signal::kUtilGpu].value, 100);
  EXPECT_FALSE(plain.samples[1][Signal::kMemTemp].ok());
  const Trace timed = read(
      "#Date       Time        gpu    pwr  pclk\n"
      "#YYYYMMDD   HH:MM:SS    Idx      W   MHz\n"
      " 20261202   10:00:00      0     85   345\n"
      " 20261202   10:00:05      0    690  1500\n");
  EXPECT_EQ(timed.samples[1].t_ns, 5'000'000'000);
  EXPECT_TRUE(timed.events.empty());
}

TEST(NvidiaSmiLog, MalformedLogsAreNamedInOneLine) {
  EXPECT_NE(testing::error_of([] { read("index, power.draw [W]\n0, 80 W\n"); }).find("timestamp"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] {
              read("timestamp, power.draw [W]\n2026/12/02 10:00:00.000, lots\n");
            }).find("log:2:2: expected a reading"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] {
              read("timestamp, power.draw [W]\nyesterday, 80 W\n");
              // A year past 2261 is past what nanoseconds since 1970 hold in 64 bits (a fuzzer's
              // find).
              EXPECT_NE(testing::error_of([] {
                          read("timestamp, power.draw [W]\n4052/12/02 23:59:59.900, 80 W\n");
                        }).find("expected a time like"),
                        std::string::npos);
            }).find("expected a time"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { read("# gpu pwr\n 0 80 1\n"); }).find("3 values"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { read("# gpu pwr\n 9999 80\n"); }).find("GPU index"),
            std::string::npos);
  EXPECT_NE(
      testing::error_of([] {
        read("timestamp, power.draw [W]\n2026/01/01 00:00:00.0, 1 W\n2026/12/01 00:00:00.0, 1 W\n");
      }).find("31 days"),
      std::string::npos);
}

// The files users have, through read_csv as report and advise --trace open them: the logs made
// from the H200's sustained-products recording summarise as that recording does.
TEST(NvidiaSmiLog, ReadCsvTakesBothLogsAndTheyTellTheSameStory) {
  for (const char* f : {"query_gemm.csv", "dmon_gemm.txt"}) {
    const Trace t = read_csv(std::string(POWERSHAPE_TEST_DIR "/trace/nvidia_smi/") + f);
    const auto s = analysis::summarize(t).front();
    ASSERT_TRUE(s.avg_power_w) << f;
    EXPECT_GT(*s.avg_power_w, 500) << f;
    EXPECT_LT(*s.avg_power_w, 700) << f;
    EXPECT_NEAR(s.sm_clock_mhz.mean, 1550, 120) << f;
  }
}

}  // namespace powershape::trace
