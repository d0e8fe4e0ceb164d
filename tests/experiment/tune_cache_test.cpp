#include "powershape/experiment/tune_cache.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "error_of.hpp"
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

// A cache under a fresh folder, through $POWERSHAPE_CACHE, for one test.
class CacheDir {
 public:
  explicit CacheDir(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / ("powershape-tune-cache-" + name)) {
    std::filesystem::remove_all(dir_);
    path_ = (dir_ / "sub" / "tune.json").string();
    setenv("POWERSHAPE_CACHE", path_.c_str(), 1);
  }
  ~CacheDir() {
    unsetenv("POWERSHAPE_CACHE");
    std::filesystem::remove_all(dir_);
  }
  const std::string& path() const { return path_; }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_ / "sub"))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path dir_;
  std::string path_;
};

// Stored counts come back by key; other keys and a missing file give none.
TEST(TuneCache, StoresAndFinds) {
  CacheDir d("finds");
  EXPECT_EQ(tune_cache_path(), d.path());
  EXPECT_FALSE(cached_chunks("a").has_value());
  EXPECT_EQ(store_chunks("a", 8, {{"why", "test"}}), "");
  store_chunks("b", 2, {});
  EXPECT_EQ(cached_chunks("a"), 8);
  EXPECT_EQ(cached_chunks("b"), 2);
  EXPECT_FALSE(cached_chunks("c").has_value());
}

// A broken cache is no entry, and the next store keeps it aside (named in its answer), not lost.
TEST(TuneCache, ABrokenCacheIsKeptAside) {
  CacheDir d("broken");
  store_chunks("a", 8, {});
  std::ofstream(d.path()) << "{\"a\": {\"chunks\": 8}";  // one byte short
  EXPECT_FALSE(cached_chunks("a").has_value());
  const std::string aside = store_chunks("b", 4, {});
  ASSERT_NE(aside, "");
  std::stringstream kept;
  kept << std::ifstream(aside).rdbuf();
  EXPECT_EQ(kept.str(), "{\"a\": {\"chunks\": 8}");
  EXPECT_EQ(cached_chunks("b"), 4);
}

// Ten tunes storing at once keep all ten entries (flock around the read-modify-write).
TEST(TuneCache, ConcurrentStoresLoseNothing) {
  CacheDir d("concurrent");
  std::vector<std::thread> tunes;
  for (int i = 0; i < 10; ++i)
    tunes.emplace_back([i] { store_chunks("k" + std::to_string(i), i + 1, {{"pad", i}}); });
  for (auto& t : tunes) t.join();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(cached_chunks("k" + std::to_string(i)), i + 1) << i;
  EXPECT_EQ(d.files(), (std::vector<std::string>{"tune.json", "tune.json.lock"}));
}

// A folder where the cache should be: one error naming it, and no temporary file left.
TEST(TuneCache, AFolderAtThePathIsRefusedCleanly) {
  CacheDir d("folder");
  std::filesystem::create_directories(d.path());
  const std::string why = testing::error_of([] { store_chunks("a", 2, {}); });
  EXPECT_NE(why.find("it is a folder"), std::string::npos) << why;
  EXPECT_EQ(d.files(), (std::vector<std::string>{"tune.json"}));
}

// POWERSHAPE_CACHE=/dev/null switches the cache off: nothing stored, nothing found, the device
// left a device (it was once renamed aside and replaced by a file, as root). A device, a FIFO or
// a link at the path is refused, and nothing is moved or written.
TEST(TuneCache, DevNullIsNoCacheAndNoOtherNodeIsTouched) {
  setenv("POWERSHAPE_CACHE", "/dev/null", 1);
  EXPECT_EQ(store_chunks("a", 2, {}), "");
  EXPECT_FALSE(cached_chunks("a").has_value());
  struct stat st {};
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_FALSE(std::filesystem::exists("/dev/null.lock"));
  if (std::filesystem::exists("/dev/full")) {
    setenv("POWERSHAPE_CACHE", "/dev/full", 1);
    EXPECT_NE(testing::error_of([] { store_chunks("a", 2, {}); }).find("it is a device"),
              std::string::npos);
    ASSERT_EQ(stat("/dev/full", &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
  }
  CacheDir d("nodes");
  std::filesystem::create_directories(std::filesystem::path(d.path()).parent_path());
  ASSERT_EQ(mkfifo(d.path().c_str(), 0600), 0);
  EXPECT_NE(testing::error_of([] { store_chunks("a", 2, {}); }).find("it is a FIFO"),
            std::string::npos);
  std::filesystem::remove(d.path());
  const std::string target = d.path() + ".target";
  std::ofstream(target) << "not json";
  std::filesystem::create_symlink(target, d.path());
  EXPECT_NE(testing::error_of([] { store_chunks("a", 2, {}); }).find("symbolic link"),
            std::string::npos);
  std::stringstream kept;
  kept << std::ifstream(target).rdbuf();
  EXPECT_EQ(kept.str(), "not json");
  EXPECT_EQ(d.files(), (std::vector<std::string>{"tune.json", "tune.json.target"}));
}

// Entries are bounded: at the bound, a new one replaces the one stored longest ago.
TEST(TuneCache, EntriesAreBounded) {
  CacheDir d("bounded");
  nlohmann::json all = nlohmann::json::object();
  for (std::size_t i = 0; i < kTuneCacheMaxEntries; ++i)
    all["k" + std::to_string(i)] = {{"chunks", 2}, {"stored_s", 1000.0 + static_cast<double>(i)}};
  std::filesystem::create_directories(std::filesystem::path(d.path()).parent_path());
  std::ofstream(d.path()) << all.dump();
  store_chunks("new", 4, {});
  EXPECT_EQ(cached_chunks("new"), 4);
  EXPECT_FALSE(cached_chunks("k0").has_value());
  EXPECT_EQ(cached_chunks("k1"), 2);
  std::ifstream in(d.path());
  EXPECT_EQ(nlohmann::json::parse(in).size(), kTuneCacheMaxEntries);
}

}  // namespace powershape::experiment
