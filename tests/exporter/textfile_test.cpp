#include "powershape/exporter/textfile.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "power_trace.hpp"

namespace powershape::exporter {
namespace {

// The file is the scrape's text, written whole, with no temporary file left.
TEST(Textfile, IsRewrittenWhole) {
  const auto dir = std::filesystem::temp_directory_path() / "powershape_textfile_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "gpu.prom").string();
  ASSERT_TRUE(write_textfile(
      path, prometheus_now(testing::power_trace(1, 0, 412'000, 500'000'000), 1'000'000'000)));
  std::stringstream got;
  got << std::ifstream(path).rdbuf();
  EXPECT_EQ(got.str(),
            prometheus_now(testing::power_trace(1, 0, 412'000, 500'000'000), 1'000'000'000));
  EXPECT_NE(got.str().find("DCGM_FI_DEV_POWER_USAGE"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
}

// A folder that does not exist: false, and nothing left behind.
TEST(Textfile, AnUnwritablePathIsReported) {
  const std::string path = "/nonexistent-powershape-dir/gpu.prom";
  EXPECT_FALSE(write_textfile(path, "x"));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace powershape::exporter
