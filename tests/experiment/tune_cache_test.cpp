#include "powershape/experiment/tune_cache.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "powershape/util/error.hpp"

namespace powershape::experiment {

// The key names what moves the best count: the GPU, its driver and power limit, the workload and
// the objective; a simulator's profile stands for the GPU.
TEST(TuneCache, KeysNameTheGpuItsLimitTheWorkloadAndTheObjective) {
  const nlohmann::json gpu = {
      {"device",
       {{"name", "NVIDIA H200"}, {"driver", "580.159.04"}, {"enforced_power_limit_mw", 700000}}}};
  workload::Workload w{workload::LmHead{16384, 896, 151936}, 4};
  EXPECT_EQ(tune_key(gpu, tune_workload_name(w), "time"),
            "NVIDIA H200 | 580.159.04 | 700 W | lmhead 16384x896x151936 dw=bf16 | time");
  // The same name as the workload's own, without its chunk count: forward alone, fp32 dW.
  workload::LmHead forward{16384, 896, 151936, false};
  forward.dw_bytes = 4;
  EXPECT_EQ(tune_workload_name({forward, 8}), "lmhead forward 16384x896x151936");
  const nlohmann::json sim = {
      {"profile", {{"name", "dgx-spark"}, {"governor", {{"power_limit_w", 160}}}}}};
  EXPECT_EQ(tune_key(sim, "msm 1,2,3", "energy"),
            "sim:dgx-spark | simulator | 160 W | msm 1,2,3 | energy");
  EXPECT_THROW(tune_workload_name(workload::Workload{workload::Square{}, 1}), powershape::Error);
}

// Stored counts come back by key; other keys, a missing file and a broken one give none.
TEST(TuneCache, StoresAndFindsAndSurvivesABrokenFile) {
  const auto dir = std::filesystem::temp_directory_path() / "powershape-tune-cache-test";
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "sub" / "tune.json").string();
  setenv("POWERSHAPE_CACHE", path.c_str(), 1);
  EXPECT_EQ(tune_cache_path(), path);
  EXPECT_FALSE(cached_chunks("a").has_value());
  store_chunks("a", 8, {{"why", "test"}});
  store_chunks("b", 2, {});
  EXPECT_EQ(cached_chunks("a"), 8);
  EXPECT_EQ(cached_chunks("b"), 2);
  EXPECT_FALSE(cached_chunks("c").has_value());
  std::ofstream(path) << "{ not json";
  EXPECT_FALSE(cached_chunks("a").has_value());
  store_chunks("a", 4, {});  // a broken file is replaced, not fatal
  EXPECT_EQ(cached_chunks("a"), 4);
  unsetenv("POWERSHAPE_CACHE");
  std::filesystem::remove_all(dir);
}

}  // namespace powershape::experiment
