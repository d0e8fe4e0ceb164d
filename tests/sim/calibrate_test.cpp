#include "powershape/sim/calibrate.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace powershape::sim {

// The targets: the shipped h200 profile reproduces the square-wave burst throughput at
// every period, and the sustained throughput and clock, within 3%.
TEST(Calibrate, TheShippedH200ProfileMeetsTheMeasuredFiguresWithin3Percent) {
  auto data = read_calibration_data(POWERSHAPE_DATA "/h200");
  EXPECT_EQ(data.square.size(), 5u);
  for (const auto& t : evaluate(load_profile("h200"), data)) {
    if (t.name == "step response ms") {
      EXPECT_LT(std::abs(t.error()), 0.5) << t.name;  // NVML shows it at 100 ms resolution
    } else {
      EXPECT_LT(std::abs(t.error()), 0.03) << t.name << ": " << t.simulated << " vs " << t.measured;
    }
  }
  EXPECT_LT(thermal_rms_c(load_profile("h200"), data.thermal), 1.5);
}

TEST(Calibrate, FitsAPerturbedProfileBackTowardsTheData) {
  auto data = read_calibration_data(POWERSHAPE_DATA "/h200");
  Profile p = load_profile("h200");
  p.flops_per_cycle *= 1.15;
  p.window_ms *= 3;
  auto c = calibrate(p, data, 120);
  auto worst = [](const std::vector<Target>& ts) {
    double w = 0;
    for (const auto& t : ts) {
      if (t.name != "step response ms") w = std::max(w, std::abs(t.error()));
    }
    return w;
  };
  EXPECT_GT(worst(c.before), 0.10);
  EXPECT_LT(worst(c.after), 0.05);
}

TEST(Calibrate, AMissingFileIsNamed) {
  try {
    read_calibration_data("/nonexistent");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read /nonexistent/square_wave_idle_summary.json");
  }
}

}  // namespace powershape::sim
