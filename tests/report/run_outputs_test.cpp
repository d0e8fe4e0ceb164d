#include "powershape/report/run_outputs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace powershape::report {
namespace {

trace::Trace one_gpu() {
  trace::Trace t;
  t.devices.resize(1);
  t.devices[0].name = "NVIDIA H200";
  for (int64_t i = 0; i < 20; ++i) {
    trace::Sample s;
    s.t_ns = i * 100'000'000;
    s[telemetry::Signal::kPowerUsage] = telemetry::Reading::of(400'000);
    t.samples.push_back(s);
  }
  return t;
}

// Each output is written on its own: one that cannot be is said, naming it, and the others are
// still written; the JSON holds the run's metadata without its samples, and what it measured.
TEST(RunOutputs, AFailedOutputLosesNoOther) {
  const auto dir = std::filesystem::temp_directory_path() / "powershape_run_outputs_test";
  std::filesystem::create_directories(dir);
  const trace::Trace t = one_gpu();
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
