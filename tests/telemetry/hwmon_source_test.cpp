#include "powershape/telemetry/hwmon_source.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

namespace powershape::telemetry {
namespace fs = std::filesystem;

class HwmonSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("ps_hwmon_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "hwmon0");
    write("hwmon0/name", "coretemp");  // not a power monitor: ignored
    fs::create_directories(root_ / "hwmon1");
    write("hwmon1/name", "ina3221");
    rail(1, "VDD_GPU_SOC", 5000, 2000);  // 10 W
    rail(2, "VDD_CPU_CV", 5000, 1000);   // 5 W
    rail(3, "VIN_SYS_5V0", 5000, 4000);  // 20 W
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    std::ofstream(root_ / rel) << text << "\n";
  }
  void rail(int k, const std::string& label, int mv, int ma) {
    write("hwmon1/in" + std::to_string(k) + "_label", label);
    write("hwmon1/in" + std::to_string(k) + "_input", std::to_string(mv));
    write("hwmon1/curr" + std::to_string(k) + "_input", std::to_string(ma));
  }
  fs::path root_;
};

TEST_F(HwmonSourceTest, ReadsTheGpuRailAndTheBoardInput) {
  HwmonSource src(root_);
  ASSERT_EQ(src.rails().size(), 3u);
  Sample s = src.poll(0, all_signals());
  EXPECT_EQ(s[Signal::kPowerInstant], Reading::of(10000));
  EXPECT_EQ(s[Signal::kPowerUsage], Reading::of(20000));
  EXPECT_EQ(s[Signal::kSmClock].status, Status::kNotSupported);
  rail(1, "VDD_GPU_SOC", 5000, 3000);
  EXPECT_EQ(src.poll(0, all_signals())[Signal::kPowerInstant], Reading::of(15000));
}

TEST_F(HwmonSourceTest, SumsTheRailsWithoutAnInputRail) {
  fs::remove(root_ / "hwmon1/in3_label");
  HwmonSource src(root_);
  EXPECT_EQ(src.poll(0, all_signals())[Signal::kPowerUsage], Reading::of(15000));
}

TEST_F(HwmonSourceTest, AnUnreadableRailIsAnErrorNotAZero) {
  HwmonSource src(root_);
  write("hwmon1/curr1_input", "garbage");
  Sample s = src.poll(0, all_signals());
  EXPECT_EQ(s[Signal::kPowerInstant].status, Status::kError);
  EXPECT_EQ(s[Signal::kPowerUsage], Reading::of(20000));
}

// A FIFO planted as a sensor file (a folder the user named, another user's) would block the
// sampler forever, a link to /dev/zero would fill memory: each reads as no reading.
TEST_F(HwmonSourceTest, AFifoOrADeviceForASensorIsNoReading) {
  fs::remove(root_ / "hwmon1/curr1_input");
  ASSERT_EQ(mkfifo((root_ / "hwmon1/curr1_input").c_str(), 0600), 0);
  fs::remove(root_ / "hwmon1/in2_input");
  fs::create_symlink("/dev/zero", root_ / "hwmon1/in2_input");
  HwmonSource src(root_);
  Sample s = src.poll(0, all_signals());
  EXPECT_EQ(s[Signal::kPowerInstant].status, Status::kError);
  EXPECT_EQ(s[Signal::kPowerUsage], Reading::of(20000));
}

TEST_F(HwmonSourceTest, NoMonitorIsAClearError) {
  fs::remove_all(root_ / "hwmon1");
  try {
    HwmonSource src(root_);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no INA3221 power rails"), std::string::npos);
  }
}

}  // namespace powershape::telemetry
