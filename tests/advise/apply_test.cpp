// Applying settings against the fake libnvidia-ml.so.1 and a fake devfreq tree only: nothing here
// touches a real GPU's settings.
#include "powershape/advise/apply.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace powershape::advise {
namespace {
namespace fs = std::filesystem;

class ApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("powershape_apply_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("POWERSHAPE_FAKE_NVML_TRACE", POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv", 1);
    setenv("POWERSHAPE_FAKE_NVML_SETTINGS", (dir_ / "nvml_settings").c_str(), 1);
    unsetenv("POWERSHAPE_FAKE_NVML_FAULTS");
    records_ = (dir_ / "state").string();
  }
  void TearDown() override {
    unsetenv("POWERSHAPE_FAKE_NVML_SETTINGS");
    fs::remove_all(dir_);
  }
  // The fake's "GPU limit_mw min_mhz max_mhz" line for GPU 0.
  std::string nvml_state() const {
    std::ifstream in(dir_ / "nvml_settings");
    std::string line;
    std::getline(in, line);
    return line;
  }
  std::size_t records() const {
    std::error_code ec;
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(records_, ec)) ++n;
    return n;
  }
  fs::path dir_;
  std::string records_;
};

TEST_F(ApplyTest, SetsThroughNvmlAndPutsItBack) {
  auto target = nvml_target(0);
  {
    Applied held(*target, {1410, 450, ""}, records_);
    EXPECT_EQ(nvml_state(), "0 450000 345 1410");  // a cap: the floor the lowest supported clock
    EXPECT_EQ(records(), 1u);                      // written before anything changed
  }
  EXPECT_EQ(nvml_state(), "0 700000 0 0");  // the limit as it was, the clocks unlocked
  EXPECT_EQ(records(), 0u);
}

TEST_F(ApplyTest, WithoutTheSupportedClocksTheFloorIsZero) {
  setenv("POWERSHAPE_FAKE_NVML_FAULTS", "code=supported_clocks:not_supported", 1);
  auto target = nvml_target(0);
  {
    Applied held(*target, {1410, 0, ""}, records_);
    EXPECT_EQ(nvml_state(), "0 0 0 1410");
  }
  EXPECT_EQ(nvml_state(), "0 700000 0 0");
}

TEST_F(ApplyTest, WithoutPermissionSaysSoAndLeavesNothingSet) {
  setenv("POWERSHAPE_FAKE_NVML_FAULTS", "code=set_clocks:no_permission", 1);
  auto target = nvml_target(0);
  try {
    Applied held(*target, {1410, 450, ""}, records_);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs root or CAP_SYS_ADMIN"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(nvml_state(), "0 700000 0 0");  // the limit it had set was put back
  EXPECT_EQ(records(), 0u);
}

TEST_F(ApplyTest, ACrashedRunIsRestoredByTheNext) {
  const pid_t child = fork();
  if (child == 0) {
    auto target = nvml_target(0);
    new Applied(*target, {0, 300, ""}, records_);  // held, never released
    std::_Exit(0);                                 // a crash: no destructor runs
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(nvml_state(), "0 300000 0 0");
  EXPECT_EQ(records(), 1u);
  // A new hold on the same GPU is refused until the leftover is restored.
  auto target = nvml_target(0);
  EXPECT_THROW(Applied(*target, {0, 400, ""}, records_), std::runtime_error);
  const auto lines =
      restore_leftovers(records_, [](const nlohmann::json& t) { return open_target(t); });
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("did not finish"), std::string::npos);
  EXPECT_EQ(nvml_state(), "0 700000 0 0");
  EXPECT_EQ(records(), 0u);
}

TEST_F(ApplyTest, JetsonDevfreqCapsTheClockAndRestoresIt) {
  const fs::path df = dir_ / "sys/devices/platform/17000000.ga10b/devfreq/17000000.ga10b";
  fs::create_directories(df);
  std::ofstream(df / "available_frequencies")
      << "306000000 408000000 510000000 612000000 714000000 816000000 918000000 1020000000 "
         "1122000000 1224000000 1300500000\n";
  std::ofstream(df / "max_freq") << "1300500000\n";
  const std::string found = find_jetson_devfreq((dir_ / "sys").string());
  ASSERT_EQ(found, df.string());
  auto target = devfreq_target(found);
  auto read = [&] {
    std::ifstream in(df / "max_freq");
    std::string s;
    in >> s;
    return s;
  };
  {
    Applied held(*target, {1000, 0, ""}, records_);
    EXPECT_EQ(read(), "918000000");  // the highest available at or under 1000 MHz
  }
  EXPECT_EQ(read(), "1300500000");
  EXPECT_THROW(Applied(*target, {0, 30, ""}, records_), std::runtime_error);  // a mode's
  EXPECT_EQ(records(), 0u);
  // Power modes through a fake nvpmodel that keeps the mode in a file.
  const fs::path bin = dir_ / "nvpmodel";
  std::ofstream(bin) << "#!/bin/sh\nstate=\"$(dirname \"$0\")/mode\"\n"
                        "case \"$1\" in -q) echo \"NV Power Mode: ?\"; cat \"$state\";;\n"
                        "-m) echo \"$2\" > \"$state\";; *) exit 1;; esac\n";
  fs::permissions(bin, fs::perms::owner_all);
  std::ofstream(dir_ / "mode") << "0\n";
  setenv("POWERSHAPE_NVPMODEL", bin.c_str(), 1);
  auto mode = [&] {
    std::ifstream in(dir_ / "mode");
    int m = -1;
    in >> m;
    return m;
  };
  {
    Applied held(*target, {1000, 0, "30W"}, records_);
    EXPECT_EQ(mode(), 2);
    EXPECT_EQ(read(), "918000000");
  }
  EXPECT_EQ(mode(), 0);  // MAXN again
  EXPECT_EQ(read(), "1300500000");
  EXPECT_THROW(Applied(*target, {0, 0, "99W"}, records_), std::runtime_error);
  EXPECT_EQ(mode(), 0);
  unsetenv("POWERSHAPE_NVPMODEL");
  EXPECT_EQ(find_jetson_devfreq((dir_ / "nothing").string()), "");
  EXPECT_THROW(devfreq_target((dir_ / "nothing").string()), std::runtime_error);
}

TEST_F(ApplyTest, RefusesWhatItCannotRestore) {
  EXPECT_THROW(nvml_target(5), std::runtime_error);  // no such GPU
  setenv("POWERSHAPE_FAKE_NVML_FAULTS", "code=power_limit:unknown", 1);
  auto target = nvml_target(0);
  EXPECT_THROW(Applied(*target, {0, 300, ""}, records_), std::runtime_error);
  EXPECT_EQ(nvml_state(), "");  // nothing was set
  EXPECT_THROW(open_target({{"kind", "toaster"}}), std::runtime_error);
  fs::create_directories(records_);
  std::ofstream(fs::path(records_) / "restore-x.json") << "[1]";
  EXPECT_THROW(restore_leftovers(records_, [](const nlohmann::json& t) { return open_target(t); }),
               std::runtime_error);
}

}  // namespace
}  // namespace powershape::advise
