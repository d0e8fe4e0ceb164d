// Applying settings against the fake libnvidia-ml.so.1 and a fake devfreq tree only: nothing here
// touches a real GPU's settings.
#include "powershape/advise/apply.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "powershape/util/error.hpp"

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

// A corrupted record for the GPU blocks neither silently nor forever: --apply names it and the
// way out, --restore stops at it with the same, and --restore --force removes it.
TEST_F(ApplyTest, ACorruptedRecordIsNamedAndForceRemovesIt) {
  auto target = nvml_target(0);
  { Applied held(*target, {0, 300, ""}, records_); }  // creates the folder, leaves no record
  const auto open = [](const nlohmann::json& t) { return open_target(t); };
  const fs::path rec = fs::path(records_) / "restore-__gpu__0__kind___nvml__.json";
  std::ofstream(rec) << "{\"target\": ";
  fs::permissions(rec, fs::perms::owner_read | fs::perms::owner_write);
  std::string why;
  Remedy remedy = Remedy::kNone;
  try {
    Applied again(*target, {0, 300, ""}, records_);
  } catch (const Error& e) {
    why = e.what();
    remedy = e.remedy();
  }
  EXPECT_NE(why.find("a forced restore removes it"), std::string::npos) << why;
  EXPECT_EQ(remedy, Remedy::kForcedRestore);  // the CLI names its command from it
  EXPECT_NE(why.find(rec.string()), std::string::npos) << why;
  EXPECT_EQ(nvml_state(), "0 700000 0 0");
  try {
    restore_leftovers(records_, open);
    ADD_FAILURE() << "a corrupted record was passed over in silence";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a forced restore"), std::string::npos) << e.what();
    EXPECT_EQ(e.remedy(), Remedy::kForcedRestore);
  }
  const auto lines = restore_leftovers(records_, open, true);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("removed"), std::string::npos);
  EXPECT_EQ(records(), 0u);
}

// What a record asks is checked against the device: a limit outside the GPU's range is named
// with the record, and a devfreq record can only name this machine's own GPU folder.
TEST_F(ApplyTest, ARecordAsksOnlyWhatTheDeviceAllows) {
  fs::create_directories(records_);
  fs::permissions(records_, fs::perms::owner_all);
  const auto open = [&](const nlohmann::json& t) {
    return open_target(t, "libnvidia-ml.so.1", (dir_ / "sys").string());
  };
  const auto plant = [&](const std::string& name, const nlohmann::json& j) {
    const fs::path p = fs::path(records_) / name;
    std::ofstream(p) << j.dump();
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
  };
  plant("restore-a.json",
        {{"target", {{"kind", "nvml"}, {"gpu", 0}}}, {"power_limit_mw", 5000000}});
  try {
    restore_leftovers(records_, open);
    ADD_FAILURE() << "an out-of-range limit was applied";
  } catch (const std::runtime_error& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("restore-a.json"), std::string::npos) << why;
    EXPECT_NE(why.find("outside GPU 0's range 200000..700000"), std::string::npos) << why;
  }
  EXPECT_EQ(nvml_state(), "");
  fs::remove(fs::path(records_) / "restore-a.json");
  // A devfreq record naming a root-only file, and the real folder with max_freq a symbolic link.
  const fs::path df = dir_ / "sys/devices/platform/17000000.ga10b/devfreq/17000000.ga10b";
  fs::create_directories(df);
  std::ofstream(dir_ / "secret") << "root only\n";
  fs::create_symlink(dir_ / "secret", df / "max_freq");
  plant("restore-b.json",
        {{"target", {{"kind", "devfreq"}, {"dir", dir_.string()}}}, {"max_freq", "1"}});
  EXPECT_THROW(restore_leftovers(records_, open), std::runtime_error);
  fs::remove(fs::path(records_) / "restore-b.json");
  plant("restore-c.json",
        {{"target", {{"kind", "devfreq"}, {"dir", df.string()}}}, {"max_freq", "1300500000"}});
  EXPECT_THROW(restore_leftovers(records_, open), std::runtime_error);
  std::ifstream in(dir_ / "secret");
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "root only");
}

// A record whose holder runs (same pid and start time) is left to it and said so.
TEST_F(ApplyTest, ARunningHolderKeepsItsSetting) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    auto target = nvml_target(0);
    new Applied(*target, {0, 300, ""}, records_);
    char c = 1;
    (void)!write(ready[1], &c, 1);
    pause();
    std::_Exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  const auto lines =
      restore_leftovers(records_, [](const nlohmann::json& t) { return open_target(t); });
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("still running"), std::string::npos) << lines[0];
  EXPECT_EQ(nvml_state(), "0 300000 0 0");
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(
      restore_leftovers(records_, [](const nlohmann::json& t) { return open_target(t); }).size(),
      1u);
  EXPECT_EQ(nvml_state(), "0 700000 0 0");
  close(ready[0]);
  close(ready[1]);
}

}  // namespace
}  // namespace powershape::advise
