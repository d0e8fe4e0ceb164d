#include "powershape/analysis/job_energy.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "powershape/analysis/process_energy.hpp"

namespace powershape::analysis {
namespace {

Summary of(const std::string& name, double joules, int gpu = 0) {
  Summary s;
  s.name = name;
  s.gpu = gpu;
  s.energy.energy_mj = joules * 1e3;
  s.energy.method = Energy::Method::kCounter;
  return s;
}

}  // namespace

// Two steps of 1000 tokens on two GPUs: the steps' energy and the run's over 2000 tokens, and
// the node's with the CPU's zones where every one was read.
TEST(JobEnergy, TheEnergyATokenInTheStepsOverTheRunAndWithTheCpus) {
  trace::Trace t;
  t.regions = {{"step", -1, 0, 10}, {"warm-up", -1, 10, 20}, {"step", -1, 20, 30}};
  const std::vector<Summary> s = {of("all", 300), of("step", 100), of("all", 300, 1),
                                  of("step", 100, 1)};
  const nlohmann::json cpu = {{"package-0", 150.0}, {"package-0 dram", 50.0}};
  const auto j = energy_per_token(t, s, cpu, 1000);
  EXPECT_EQ(j["steps"], 2);
  EXPECT_EQ(j["tokens"], 2000.0);
  EXPECT_DOUBLE_EQ(j["gpu_j_per_token_in_steps"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["gpu_j_per_token"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(j["node_j_per_token"].get<double>(), 0.4);
  // A zone not read: no node figure; no CPU at all: the same.
  EXPECT_FALSE(energy_per_token(t, s, {{"package-0", nullptr}}, 1000).contains("node_j_per_token"));
  EXPECT_FALSE(energy_per_token(t, s, nullptr, 1000).contains("node_j_per_token"));
}

TEST(JobEnergy, NoStepsNoTokensOrNoEnergyInTheStepsIsNone) {
  trace::Trace t;
  const std::vector<Summary> s = {of("all", 300)};
  EXPECT_TRUE(energy_per_token(t, s, nullptr, 1000).is_null());  // no steps
  t.regions = {{"step", -1, 0, 10}};
  EXPECT_TRUE(energy_per_token(t, s, nullptr, 0).is_null());  // no tokens
  EXPECT_TRUE(energy_per_token(t, s, nullptr, -5).is_null());
  auto unknown = of("step", 0);
  unknown.energy.method = Energy::Method::kNone;
  EXPECT_TRUE(energy_per_token(t, {of("all", 300), unknown}, nullptr, 1000).is_null());
}

// The CPU's zones over a run, read from a powercap tree: a wrap counted once, an unreadable zone
// null, no tree no figure.
TEST(JobEnergy, EachCpuZoneBetweenTwoReadings) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("ps_job_energy_" + std::to_string(getpid()));
  fs::create_directories(root / "intel-rapl:0");
  std::ofstream(root / "intel-rapl:0" / "name") << "package-0\n";
  std::ofstream(root / "intel-rapl:0" / "max_energy_range_uj") << "1000000\n";
  std::ofstream(root / "intel-rapl:0" / "energy_uj") << "900000\n";
  const telemetry::RaplCounters rapl(root.string());
  const auto from = rapl.read();
  std::ofstream(root / "intel-rapl:0" / "energy_uj") << "100000\n";  // wrapped: 0.2 J
  const auto j = cpu_energy(rapl, from, rapl.read());
  ASSERT_TRUE(j.contains("package-0"));
  EXPECT_NEAR(j["package-0"].get<double>(), 0.2, 1e-9);
  EXPECT_TRUE(cpu_energy(rapl, {std::nullopt}, rapl.read())["package-0"].is_null());
  const telemetry::RaplCounters none((root / "absent").string());
  EXPECT_TRUE(cpu_energy(none, {}, {}).is_null());
  fs::remove_all(root);
}

TEST(JobEnergy, ProcessEnergyAsJson) {
  EXPECT_TRUE(to_json(std::vector<ProcessEnergy>{}).is_null());
  const auto j = to_json({{0, kNoProcess, "no process busy", 5, 0}, {0, 42, "python", 10, 2.5}});
  ASSERT_EQ(j.size(), 2u);
  EXPECT_TRUE(j[0]["pid"].is_null());
  EXPECT_EQ(j[1]["pid"], 42);
  EXPECT_EQ(j[1]["name"], "python");
  EXPECT_EQ(j[1]["busy_s"], 2.5);
}

}  // namespace powershape::analysis
