// Blackwell's power smoothing against the fake libnvidia-ml.so.1 only (fake_smoothing.hpp): read,
// set under a restore record, put back, refused where the GPU has none. No real GPU is touched.
#include "powershape/advise/power_smoothing.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "powershape/advise/apply.hpp"
#include "powershape/util/error.hpp"

namespace powershape::advise {
namespace {
namespace fs = std::filesystem;
namespace nvml = telemetry::nvml;

class PowerSmoothingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("powershape_smoothing_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("POWERSHAPE_FAKE_NVML_TRACE", POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv", 1);
    setenv("POWERSHAPE_FAKE_NVML_SETTINGS", (dir_ / "nvml_settings").c_str(), 1);
    setenv("POWERSHAPE_FAKE_NVML_SMOOTHING", (dir_ / "smoothing").c_str(), 1);
    unsetenv("POWERSHAPE_FAKE_NVML_FAULTS");
    records_ = (dir_ / "state").string();
  }
  void TearDown() override {
    unsetenv("POWERSHAPE_FAKE_NVML_SETTINGS");
    unsetenv("POWERSHAPE_FAKE_NVML_SMOOTHING");
    unsetenv("POWERSHAPE_FAKE_NVML_FAULTS");
    fs::remove_all(dir_);
  }
  static SmoothingStatus status() {
    nvml::Library lib;
    nvml::Device dev = nullptr;
    EXPECT_EQ(lib.api().DeviceGetHandleByIndex(0, &dev), nvml::kSuccess);
    return read_smoothing(lib.api(), dev, "GPU 0");
  }
  std::size_t records() const {
    std::error_code ec;
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(records_, ec)) ++n;
    return n;
  }
  static Setting smoothing(SmoothingChange c) {
    Setting s;
    s.smoothing = c;
    return s;
  }
  fs::path dir_;
  std::string records_;
};

TEST_F(PowerSmoothingTest, ReadsTheStateTheProfilesAndTheFloorsAllowed) {
  const SmoothingStatus s = status();
  EXPECT_FALSE(s.enabled);
  EXPECT_EQ(s.active_profile, 0);
  EXPECT_DOUBLE_EQ(s.applied_floor_w, 0);
  EXPECT_DOUBLE_EQ(s.applied_ceiling_w, 700);
  EXPECT_DOUBLE_EQ(s.min_floor_pct, 20);
  EXPECT_DOUBLE_EQ(s.max_floor_pct, 90);
  ASSERT_EQ(s.profiles.size(), 5u);
  // The fields give mW/s; the profile is in W/s, as the setter takes it.
  EXPECT_EQ(s.profiles[3], (SmoothingProfile{20, 1000, 500, 100}));
  ASSERT_TRUE(s.lifetime_pct.has_value());
  EXPECT_EQ(to_json(s)["profiles"].size(), 5u);
}

TEST_F(PowerSmoothingTest, AGpuWithoutItIsNamedAndNothingIsRecorded) {
  unsetenv("POWERSHAPE_FAKE_NVML_SMOOTHING");  // an H100
  try {
    status();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("GPU 0 has no power smoothing"), std::string::npos)
        << e.what();
  }
  auto target = nvml_target(0);
  EXPECT_THROW(Applied(*target, smoothing({.profile = 1, .floor_pct = 60}), records_), Error);
  EXPECT_EQ(records(), 0u);
  // A driver older than the fields refuses their ids as invalid: none, said so.
  setenv("POWERSHAPE_FAKE_NVML_SMOOTHING", (dir_ / "smoothing").c_str(), 1);
  setenv("POWERSHAPE_FAKE_NVML_FAULTS", "code=fields:2", 1);
  try {
    status();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
  }
}

TEST_F(PowerSmoothingTest, SetWhileHeldAndPutBackAfter) {
  auto target = nvml_target(0);
  {
    Applied held(
        *target,
        smoothing({.profile = 2, .floor_pct = 60, .ramp_up_w_per_s = 100, .hysteresis_ms = 250}),
        records_);
    EXPECT_EQ(records(), 1u);
    const SmoothingStatus s = status();
    EXPECT_TRUE(s.enabled);
    EXPECT_EQ(s.active_profile, 2);
    EXPECT_EQ(s.profiles[2], (SmoothingProfile{60, 100, 500, 250}));
    EXPECT_DOUBLE_EQ(s.applied_floor_w, 420);  // 60% of 700 W
    held.restore();
  }
  const SmoothingStatus s = status();
  EXPECT_FALSE(s.enabled);
  EXPECT_EQ(s.active_profile, 0);
  EXPECT_EQ(s.profiles[2], (SmoothingProfile{20, 1000, 500, 100}));
  EXPECT_EQ(records(), 0u);
}

TEST_F(PowerSmoothingTest, WhatTheGpuDoesNotAllowIsNamedBeforeAnythingChanges) {
  auto target = nvml_target(0);
  const auto error_of = [&](SmoothingChange c) -> std::string {
    try {
      Applied held(*target, smoothing(c), records_);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << e.what();
      return e.subject() + ": " + e.detail();
    }
    return "no error";
  };
  EXPECT_EQ(error_of({.floor_pct = 95}), "floor: 95% is outside GPU 0's floors, 20-90%");
  EXPECT_EQ(error_of({.profile = 5}).rfind("profile: 5 is not one of", 0), 0u);
  EXPECT_EQ(error_of({.ramp_down_w_per_s = 0}).rfind("ramp-down: 0 W/s: a ramp is above 0", 0), 0u);
  EXPECT_EQ(error_of({.hysteresis_ms = -1}).rfind("hysteresis: -1 ms is not 0-600000 ms", 0), 0u);
  EXPECT_EQ(status().profiles[0], (SmoothingProfile{20, 1000, 500, 100}));
  EXPECT_FALSE(status().enabled);
  EXPECT_EQ(records(), 0u);
}

TEST_F(PowerSmoothingTest, WithoutPermissionSaysSoAndLeavesNothingSet) {
  setenv("POWERSHAPE_FAKE_NVML_FAULTS", "code=smoothing_state:no_permission:1", 1);  // refused once
  auto target = nvml_target(0);
  try {
    Applied held(*target, smoothing({.profile = 1, .floor_pct = 50}), records_);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs root or CAP_SYS_ADMIN"), std::string::npos)
        << e.what();
  }
  unsetenv("POWERSHAPE_FAKE_NVML_FAULTS");
  const SmoothingStatus s = status();  // the floor and the profile it had set are put back
  EXPECT_EQ(s.active_profile, 0);
  EXPECT_EQ(s.profiles[1], (SmoothingProfile{20, 1000, 500, 100}));
  EXPECT_EQ(records(), 0u);
}

TEST_F(PowerSmoothingTest, ACrashedRunIsRestoredAndABadRecordRefused) {
  const pid_t child = fork();
  if (child == 0) {
    auto target = nvml_target(0);
    new Applied(*target, smoothing({.profile = 4, .floor_pct = 80}), records_);  // never released
    std::_Exit(0);
  }
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(status().enabled);
  ASSERT_EQ(records(), 1u);
  const auto lines =
      restore_leftovers(records_, [](const nlohmann::json& t) { return open_target(t); });
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("power smoothing on, profile 4 (floor 80%)"), std::string::npos)
      << lines[0];
  EXPECT_FALSE(status().enabled);
  EXPECT_EQ(status().profiles[4].floor_pct, 20);
  // A record asking a floor of 250% or an unknown profile sets nothing.
  for (const auto& bad :
       {nlohmann::json{
            {"enabled", true}, {"profile", 1}, {"params", {{"profile", 1}, {"floor_pct", 250}}}},
        nlohmann::json{{"enabled", true}, {"profile", 9}, {"params", {{"profile", 1}}}},
        nlohmann::json{{"enabled", "yes"}, {"profile", 1}, {"params", {}}},
        // a ramp of 0 W/s would pin the power: refused as a change asking it would be
        nlohmann::json{{"enabled", true},
                       {"profile", 1},
                       {"params", {{"profile", 1}, {"ramp_up_w_per_s", 0}}}}}) {
    nvml::Library lib;
    nvml::Device dev = nullptr;
    ASSERT_EQ(lib.api().DeviceGetHandleByIndex(0, &dev), nvml::kSuccess);
    EXPECT_THROW(restore_smoothing(lib.api(), dev, "GPU 0", bad), Error) << bad.dump();
  }
  EXPECT_FALSE(status().enabled);
  EXPECT_EQ(status().active_profile, 0);
}

TEST(SmoothingChange, DescribesWhatItAsks) {
  EXPECT_EQ((SmoothingChange{}).describe(), "power smoothing on");
  EXPECT_EQ((SmoothingChange{.enabled = false}).describe(), "power smoothing off");
  EXPECT_EQ((SmoothingChange{.profile = 1, .floor_pct = 60, .ramp_down_w_per_s = 50}).describe(),
            "power smoothing on, profile 1 (floor 60%, down 50 W/s)");
}

}  // namespace
}  // namespace powershape::advise
