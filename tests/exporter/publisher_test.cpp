#include "powershape/exporter/publisher.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "power_trace.hpp"

namespace powershape::exporter {
namespace {

// Once a second, the textfile holds the recording's metrics; more often, nothing is redone; with a
// retention, what is older is forgotten.
TEST(Publisher, PublishesOnceASecondAndKeepsWhatItIsToldTo) {
  const auto dir = std::filesystem::temp_directory_path() / "powershape_publisher_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "gpu.prom").string();
  const telemetry::RaplCounters rapl;
  std::vector<std::pair<std::string, std::string>> said;
  Publisher p({path, nullptr, 2, 0}, rapl,
              [&](const std::string& o, const std::string& w) { said.emplace_back(o, w); });
  trace::Trace t = testing::power_trace(101, 100'000'000, 400'000);
  p.tick(t, 10'000'000'000);
  std::stringstream first;
  first << std::ifstream(path).rdbuf();
  EXPECT_NE(first.str().find("DCGM_FI_DEV_POWER_USAGE"), std::string::npos);
  EXPECT_LT(t.samples.size(), 101u);  // only about the last 2 s are kept
  std::filesystem::remove(path);
  p.tick(t, 10'500'000'000);  // within the second: not again
  EXPECT_FALSE(std::filesystem::exists(path));
  p.finish(t);  // the end writes it a last time
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_TRUE(said.empty());
  std::filesystem::remove_all(dir);
}

// A textfile that cannot be written is said once, naming the output; the recording goes on.
TEST(Publisher, AFailedTextfileIsSaidOnce) {
  const telemetry::RaplCounters rapl;
  std::vector<std::pair<std::string, std::string>> said;
  Publisher p({"/nonexistent-powershape-dir/gpu.prom", nullptr, 0, 0}, rapl,
              [&](const std::string& o, const std::string& w) { said.emplace_back(o, w); });
  trace::Trace t = testing::power_trace(31, 100'000'000, 400'000);
  p.tick(t, 1'000'000'000);
  p.tick(t, 2'000'000'000);
  p.finish(t);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].first, "textfile");
  EXPECT_EQ(said[0].second, "cannot write /nonexistent-powershape-dir/gpu.prom");
}

}  // namespace
}  // namespace powershape::exporter
