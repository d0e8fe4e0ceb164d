#include "powershape/report/run_outputs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "power_trace.hpp"

namespace powershape::report {
namespace {

// Each output is written on its own: one that cannot be is said, naming it, and the others are
// still written; the JSON holds the run's metadata without its samples, and what it measured.
TEST(RunOutputs, AFailedOutputLosesNoOther) {
  const auto dir = std::filesystem::temp_directory_path() / "powershape_run_outputs_test";
  std::filesystem::create_directories(dir);
  const trace::Trace t = testing::power_trace(20, 100'000'000, 400'000);
  const auto summaries = analysis::summarize(t);
  RunRecord r;
  r.title = "a run";
  r.summaries = &summaries;
  r.cpu = {{"package-0", 12.5}};
  std::vector<std::pair<std::string, std::string>> said;
  const bool all = write_outputs(
      {(dir / "run.json").string(), "/nonexistent-powershape-dir/run.json.gz",
       (dir / "run.html").string()},
      t, r, [&](const std::string& o, const std::string& w) { said.emplace_back(o, w); });
  EXPECT_FALSE(all);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].first, "perfetto");
  const auto j = nlohmann::json::parse(std::ifstream(dir / "run.json"));
  EXPECT_TRUE(j.dump().find("package-0") != std::string::npos);
  EXPECT_FALSE(j.dump().find("\"samples\":[{") != std::string::npos);
  EXPECT_TRUE(std::filesystem::file_size(dir / "run.html") > 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace powershape::report
