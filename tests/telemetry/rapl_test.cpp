#include "powershape/telemetry/rapl.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace powershape::telemetry {
namespace fs = std::filesystem;

// A powercap tree as Linux lays it out: two packages, each with DRAM and core subzones, and psys.
class RaplTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ps_rapl_" + std::to_string(getpid()));
    fs::remove_all(root_);
    zone("intel-rapl:0", "package-0", 1'000'000, 262'143'328'850);
    zone("intel-rapl:0/intel-rapl:0:0", "core", 10, 262'143'328'850);
    zone("intel-rapl:0/intel-rapl:0:1", "dram", 5'000, 65'712'999'613);
    zone("intel-rapl:1", "package-1", 262'143'000'000, 262'143'328'850);
    zone("intel-rapl:2", "psys", 7, 262'143'328'850);
  }
  void TearDown() override { fs::remove_all(root_); }
  void zone(const std::string& dir, const std::string& name, uint64_t uj, uint64_t max) {
    fs::create_directories(root_ / dir);
    std::ofstream(root_ / dir / "name") << name << "\n";
    std::ofstream(root_ / dir / "max_energy_range_uj") << max << "\n";
    set(dir, uj);
  }
  void set(const std::string& dir, uint64_t uj) {
    std::ofstream(root_ / dir / "energy_uj") << uj << "\n";
  }
  fs::path root_;
};

// The packages and their DRAM, not the core (inside the package's count) nor psys (the whole
// platform); a counter that wrapped at its range counted once.
TEST_F(RaplTest, PackagesAndDramOverARunAWrapCountedOnce) {
  RaplCounters r(root_.string());
  ASSERT_EQ(r.zones().size(), 3u);
  EXPECT_EQ(r.zones()[0].name, "package-0");
  EXPECT_EQ(r.zones()[1].name, "package-0 dram");
  EXPECT_EQ(r.zones()[2].name, "package-1");
  const auto from = r.read();
  set("intel-rapl:0", 3'500'000);
  set("intel-rapl:0/intel-rapl:0:1", 1'005'000);
  set("intel-rapl:1", 671'150);  // wrapped: 328,850 to the top, then 671,150
  const auto j = r.joules(from, r.read());
  ASSERT_EQ(j.size(), 3u);
  EXPECT_DOUBLE_EQ(*j[0], 2.5);
  EXPECT_DOUBLE_EQ(*j[1], 1.0);
  EXPECT_DOUBLE_EQ(*j[2], 1.0);
  EXPECT_TRUE(r.unreadable().empty());
}

// A counter that cannot be read is no figure, said in one line naming it; no powercap, no zones.
TEST_F(RaplTest, AnUnreadableCounterIsSaidAndNoPowercapIsNoZone) {
  RaplCounters r(root_.string());
  fs::remove(root_ / "intel-rapl:1" / "energy_uj");
  const auto now = r.read();
  EXPECT_FALSE(now[2].has_value());
  EXPECT_NE(r.unreadable().find("intel-rapl:1/energy_uj"), std::string::npos) << r.unreadable();
  EXPECT_FALSE(r.joules(now, now)[2].has_value());
  EXPECT_TRUE(RaplCounters((root_ / "none").string()).zones().empty());
}

}  // namespace powershape::telemetry
