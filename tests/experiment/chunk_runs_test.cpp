#include "powershape/experiment/chunk_runs.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "printed.hpp"

namespace powershape::experiment {
namespace {

workload::WorkloadArgs small(const std::string& chunks) {
  workload::WorkloadArgs w;
  w.workload = "lmhead";
  w.shape = "4096,896,151936";
  w.chunks = chunks;
  return w;
}

}  // namespace

// repro on a simulated device: said before it measures (the device, the widened bound with how to
// choose it, the design), then the result with what the H200 measured of the same question.
TEST(ChunkRuns, ReproSaysWhatItDoesThenMeasures) {
  ReproRequest q;
  q.workload = small("1,4");
  q.device = "sim";
  q.design.rounds = 2;
  q.design.window_s = 0.2;
  q.min_effect_hint = "HINT";
  std::vector<std::string> said;
  q.say = [&](const std::string& l) { said.push_back(l); };
  const ReproRun r = repro(q);
  ASSERT_GE(said.size(), 3u);
  EXPECT_EQ(said.front(), "powershape repro on the simulated h200 (calibrated profile)")
      << said.front();
  EXPECT_NE(said[1].find("is called within it (HINT)"), std::string::npos) << said[1];
  EXPECT_EQ(said.back().rfind("workload lmhead 4096x896x151936", 0), 0u) << said.back();
  EXPECT_EQ(r.result.configs.size(), 2u);
  EXPECT_EQ(r.reference_profile, "h200");
  EXPECT_NE(testing::printed([&](std::FILE* f) { print_repro(f, r); }).find("chunks=4"),
            std::string::npos);
  // A chosen bound is kept: nothing widened, nothing said of it.
  said.clear();
  q.min_effect_chosen = true;
  repro(q);
  for (const auto& l : said) EXPECT_EQ(l.find("HINT"), std::string::npos) << l;
}

// What cannot be run is named: a kind that is not chunked, a bound that leaves no verdict, one
// chunk count to tune.
TEST(ChunkRuns, WhatCannotBeRunIsNamed) {
  ReproRequest r;
  r.workload = small("1,2");
  r.workload.workload = "gemm";
  r.device = "sim";
  EXPECT_EQ(testing::refused_for([&] { repro(r); }), "workload");
  r.workload.workload = "lmhead";
  r.design.min_effect = 1;  // every difference "within": no verdict could be given
  EXPECT_EQ(testing::refused_for([&] { repro(r); }), "min-effect");
  TuneRequest t;
  t.workload = small("4");
  t.device = "sim";
  EXPECT_EQ(testing::refused_for([&] { tune_workload(t); }), "chunks");
}

// tune on a simulated device: the model its profile gives, the race, the choice cached under the
// device, the workload and the objective, and said so; nothing cached when asked not to.
TEST(ChunkRuns, TuneRacesAndCachesItsChoice) {
  // A cache of this test's own, gone with it whatever fails.
  struct Cache {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("chunk_runs_" + std::to_string(getpid()));
    Cache() {
      std::filesystem::create_directories(dir);
      setenv("POWERSHAPE_CACHE", (dir / "tune.json").c_str(), 1);
    }
    ~Cache() {
      unsetenv("POWERSHAPE_CACHE");
      std::filesystem::remove_all(dir);
    }
  } cache;
  const auto dir = cache.dir;
  TuneRequest q;
  q.workload = small("1,2,4");
  q.device = "sim";
  q.options.window_s = 0.2;
  q.options.max_rounds = 3;
  std::vector<std::string> said;
  q.say = [&](const std::string& l) { said.push_back(l); };
  const TuneRun r = tune_workload(q);
  ASSERT_FALSE(said.empty());
  EXPECT_EQ(said.front(), "powershape tune on the simulated h200 (calibrated profile)");
  ASSERT_TRUE(r.cached.has_value());
  EXPECT_TRUE(std::filesystem::exists(dir / "tune.json"));
  const std::string out = testing::printed([&](std::FILE* f) { print_tune_run(f, r); });
  EXPECT_NE(out.find("cached: " + std::to_string(r.cached->chunks) + " chunks for"),
            std::string::npos)
      << out;
  EXPECT_TRUE(to_json(r).contains("device"));
  const auto stored = std::filesystem::last_write_time(dir / "tune.json");
  q.cache = false;
  q.workload.shape = "2048,896,151936";  // an entry of its own, were it stored
  EXPECT_FALSE(tune_workload(q).cached.has_value());
  EXPECT_EQ(std::filesystem::last_write_time(dir / "tune.json"), stored);
}

}  // namespace powershape::experiment
