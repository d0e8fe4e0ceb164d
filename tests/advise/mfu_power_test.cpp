#include "powershape/advise/mfu_power.hpp"

#include <gtest/gtest.h>

#include "powershape/sim/profile.hpp"

namespace powershape::advise {

TEST(MfuPower, RecoversALine) {
  std::vector<MfuPoint> pts;
  for (double m : {0.1, 0.3, 0.5}) pts.push_back({"p", m, 100 + 800 * m, 0, false});
  pts.push_back({"capped", 0.8, 700, 0.9, false});  // left out: at the cap
  pts.push_back({"memory", 0.2, 600, 0, true});     // left out: memory gaps
  const MfuModel m = fit_mfu(pts);
  EXPECT_NEAR(m.idle_w, 100, 1e-6);
  EXPECT_NEAR(m.w_per_mfu, 800, 1e-6);
  EXPECT_EQ(m.fitted_on, 3);
  EXPECT_NEAR(m.rms_w, 0, 1e-6);
  EXPECT_THROW(fit_mfu({pts[0], pts[3]}), std::runtime_error);  // one point
  EXPECT_THROW(fit_mfu({{"a", 0.40, 400, 0, false}, {"b", 0.45, 440, 0, false}}),
               std::runtime_error);  // too narrow a span
}

// The H200's own recording: linear where compute-bound and uncapped, and where it breaks.
TEST(MfuPower, OnTheH200Recording) {
  const double peak = sim::load_profile("h200").peak_flops_per_s();
  const auto pts = read_mfu_points(POWERSHAPE_DATA "/h200/record", peak);
  const MfuModel m = fit_mfu(pts);
  EXPECT_GE(m.fitted_on, 6);
  EXPECT_LT(m.rms_w, 15);
  EXPECT_GT(m.idle_w, 80);
  EXPECT_LT(m.idle_w, 200);
  for (const auto& p : pts) {
    const double err = (m.predict_w(p.mfu) - p.power_w) / p.power_w;
    if (p.name == "sustained") {
      EXPECT_GT(err, 0.1);  // at the cap: power stops at 700 W
    }
    if (p.memory && p.mfu < 0.3) {
      EXPECT_LT(err, -0.3);  // a stream's power no FLOP counts
    }
  }
  // data/h200's older summaries hold uncapped waves at one duty only: no slope to fit.
  EXPECT_THROW(fit_mfu(read_mfu_points(POWERSHAPE_DATA "/h200", peak)), std::runtime_error);
  EXPECT_THROW(read_mfu_points("/no/such/folder", peak), std::runtime_error);
}

}  // namespace powershape::advise
