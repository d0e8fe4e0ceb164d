#include "powershape/analysis/swing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numbers>

namespace powershape::analysis {
namespace {

PowerSeries square(double hz, double lo, double hi, double dt, double seconds) {
  PowerSeries p{0, dt, std::vector<double>(static_cast<std::size_t>(std::llround(seconds / dt)))};
  for (std::size_t i = 0; i < p.w.size(); ++i)
    p.w[i] = std::fmod((static_cast<double>(i) + 0.5) * dt * hz, 1.0) < 0.5 ? hi : lo;
  return p;
}

GridSpec spec_with_shares() {
  GridSpec g;
  g.name = "test";
  g.ramp_window_s = 0.1;
  g.ramp_up = GridLimit{0.5, true, "up"};
  g.ramp_down = GridLimit{2000, false, "down"};
  g.range_window_s = 10;
  g.range = GridLimit{0.2, true, "range"};
  GridBand b;
  b.lo_hz = 0.1;
  b.hi_hz = 20;
  b.max_share = 0.2;
  b.source = "band";
  g.bands.push_back(b);
  return g;
}

}  // namespace

TEST(Swing, ARampOfKnownSlope) {
  // 100 W for 2 s, up to 700 W over 6 s (100 W/s), 700 W for 4 s, at 10 ms.
  PowerSeries p{0, 0.01, {}};
  for (int i = 0; i < 1200; ++i) {
    const double t = i * 0.01 + 0.005;
    p.w.push_back(t < 2 ? 100 : t < 8 ? 100 + 100 * (t - 2) : 700);
  }
  const Ramp r = ramp_rates(p, 1.0);
  EXPECT_NEAR(r.up_max_w_per_s, 100, 0.5);
  EXPECT_NEAR(r.down_max_w_per_s, 0, 1e-9);
  // A ramp window longer than the series has no ramp to give.
  EXPECT_EQ(ramp_rates(p, 7.0).up_max_w_per_s, 0);
}

TEST(Swing, ASquareWavesRampDependsOnTheWindow) {
  const PowerSeries p = square(2, 200, 700, 1e-3, 20);
  // 100 ms windows straddling an edge: 500 W apart, 0.1 s apart.
  const Ramp fast = ramp_rates(p, 0.1);
  EXPECT_NEAR(fast.up_max_w_per_s, 5000, 1);
  EXPECT_NEAR(fast.down_max_w_per_s, 5000, 1);
  // Over 1 s (two whole periods) every window holds the same mean: a grid ramp limit on 1 s
  // means does not see a 2 Hz swing; the band limit does.
  const Ramp slow = ramp_rates(p, 1.0);
  EXPECT_LT(slow.up_max_w_per_s, 1);
  EXPECT_NEAR(max_range_w(p, 10), 500, 1e-9);
  EXPECT_NEAR(max_range_w(p, 0.1), 500, 1e-9);
  EXPECT_NEAR(max_range_w(p, 0.001), 0, 1e-9);
}

TEST(Swing, VerdictsScaleToTheFleetAndNameTheirSource) {
  const PowerSeries p = square(2, 200, 700, 1e-3, 40);
  SwingOptions o;
  o.ramp_window_s = 0.1;
  o.range_window_s = 10;
  o.scale = 1000;
  o.rated_w = 700;
  const Swing s = analyse_swing(p, spec_with_shares(), o);
  EXPECT_NEAR(s.mean_w, 450e3, 1);
  EXPECT_NEAR(s.rated_w, 700e3, 1e-6);
  EXPECT_NEAR(s.period_s, 0.5, 0.005);
  ASSERT_EQ(s.verdicts.size(), 4u);
  // Ramp up: 5 MW/s against half the rated power a second (350 kW/s): exceeded.
  EXPECT_EQ(s.verdicts[0].limit, "ramp up");
  EXPECT_NEAR(s.verdicts[0].measured, 5e6, 1e3);
  EXPECT_NEAR(s.verdicts[0].allowed, 350e3, 1e-6);
  EXPECT_FALSE(s.verdicts[0].pass);
  EXPECT_EQ(s.verdicts[0].source, "up");
  // Ramp down's limit is absolute: not scaled.
  EXPECT_NEAR(s.verdicts[1].allowed, 2000, 1e-9);
  // Range: 500 kW against 20% of 700 kW.
  EXPECT_NEAR(s.verdicts[2].measured, 500e3, 1e-6);
  EXPECT_FALSE(s.verdicts[2].pass);
  // The 0.1-20 Hz band holds 96% of the energy: exceeded.
  EXPECT_EQ(s.verdicts[3].limit, "band 0.1-20 Hz");
  EXPECT_NEAR(s.verdicts[3].measured, 0.96, 0.01);
  EXPECT_FALSE(s.verdicts[3].pass);
  EXPECT_TRUE(s.verdicts[3].note.empty()) << s.verdicts[3].note;
}

TEST(Swing, AFlatJobPassesEveryLimit) {
  PowerSeries p{0, 1e-3, std::vector<double>(30000, 650.0)};
  SwingOptions o;
  o.ramp_window_s = 0.1;
  o.rated_w = 700;
  const Swing s = analyse_swing(p, spec_with_shares(), o);
  for (const auto& v : s.verdicts) EXPECT_TRUE(v.known && v.pass) << v.limit;
  EXPECT_EQ(s.period_s, 0);
}

TEST(Swing, ABandsMagnitudeIsItsRmsInWatts) {
  // 450 W with a 2 Hz sine of 100 W amplitude, at 1 ms: an RMS of 70.7 W, all of it in 0.1-20 Hz.
  PowerSeries p{0, 1e-3, std::vector<double>(40000)};
  for (std::size_t i = 0; i < p.w.size(); ++i)
    p.w[i] = 450 + 100 * std::sin(2 * std::numbers::pi * 2 * static_cast<double>(i) * 1e-3);
  GridSpec g;
  GridBand b;
  b.lo_hz = 0.1;
  b.hi_hz = 20;
  b.max_rms = GridLimit{0.05, true, "rms"};  // 5% of the rated power
  b.source = "rms";
  g.bands.push_back(b);
  SwingOptions o;
  o.rated_w = 700;
  o.scale = 1000;
  const Swing s = analyse_swing(p, g, o);
  ASSERT_EQ(s.verdicts.size(), 1u);
  EXPECT_EQ(s.verdicts[0].limit, "rms 0.1-20 Hz");
  EXPECT_EQ(s.verdicts[0].unit, "W");
  EXPECT_NEAR(s.verdicts[0].measured, 1000 * 100 / std::sqrt(2.0), 1000 * 1.0);
  EXPECT_NEAR(s.verdicts[0].allowed, 0.05 * 700e3, 1e-6);  // 35 kW against 70.7 kW
  EXPECT_FALSE(s.verdicts[0].pass);
  EXPECT_TRUE(s.bands[0].failed);
  EXPECT_NEAR(s.bands[0].rms_w, s.verdicts[0].measured, 1e-9);
  const auto j = to_json(s, 100);
  EXPECT_NEAR(j["bands"][0]["max_rms_w"].get<double>(), 35e3, 1e-6);
  EXPECT_TRUE(j["bands"][0]["max_share"].is_null());
  EXPECT_EQ(j["bands"][0]["pass"], false);
  // Without the rated power a share of it is unknown, not a pass; so is the band.
  o.rated_w = 0;
  const Swing u = analyse_swing(p, g, o);
  EXPECT_FALSE(u.verdicts[0].known);
  EXPECT_TRUE(to_json(u, 100)["bands"][0]["pass"].is_null());
  // Read at 10 Hz, the band is seen to 5 Hz only: the 2 Hz sine's RMS there passes a looser
  // limit, but what the recording cannot see might not: unknown. Over it, it fails, known.
  PowerSeries coarse{0, 0.1, std::vector<double>(400)};
  for (std::size_t i = 0; i < coarse.w.size(); ++i)
    coarse.w[i] =
        450 + 100 * std::sin(2 * std::numbers::pi * 2 * (static_cast<double>(i) + 0.5) * 0.1);
  o.rated_w = 700;
  o.scale = 1;
  g.bands[0].max_rms = GridLimit{0.2, true, ""};  // 140 W
  const Swing loose = analyse_swing(coarse, g, o);
  EXPECT_FALSE(loose.verdicts[0].known);
  EXPECT_NE(loose.verdicts[0].note.find("seen up to 5 Hz"), std::string::npos);
  g.bands[0].max_rms = GridLimit{0.05, true, ""};  // 35 W
  const Swing tight = analyse_swing(coarse, g, o);
  EXPECT_TRUE(tight.verdicts[0].known);
  EXPECT_FALSE(tight.verdicts[0].pass);
}

TEST(Swing, AFlatJobsNoiseFailsAShareLimitNotAMagnitudeLimit) {
  // 650 W with +-1 W of noise: the variation is tiny, and spread over every band, so most of it
  // sits in 0.1-20 Hz of the 0-25 Hz a 20 ms recording sees; its RMS there is under 1 W.
  PowerSeries p{0, 0.02, std::vector<double>(3000)};
  uint32_t x = 12345;
  for (double& v : p.w) {
    x = x * 1664525u + 1013904223u;
    v = 650 + 2.0 * (static_cast<double>(x >> 8) / 16777216.0 - 0.5);
  }
  GridSpec g;
  GridBand b;
  b.lo_hz = 0.1;
  b.hi_hz = 20;
  b.max_share = 0.2;
  b.max_rms = GridLimit{0.01, true, ""};
  g.bands.push_back(b);
  SwingOptions o;
  o.rated_w = 700;
  const Swing s = analyse_swing(p, g, o);
  ASSERT_EQ(s.verdicts.size(), 2u);
  EXPECT_GT(s.verdicts[0].measured, 0.7);  // the share: ~80%, failed
  EXPECT_FALSE(s.verdicts[0].pass);
  EXPECT_LT(s.verdicts[1].measured, 1.0);  // the RMS: ~0.5 W against 7 W
  EXPECT_TRUE(s.verdicts[1].pass);
}

TEST(Swing, ALimitOfTheRatedPowerIsUnknownWithoutIt) {
  const Swing s = analyse_swing(square(2, 200, 700, 1e-3, 30), spec_with_shares(),
                                SwingOptions{0.1, 10, 20, 1, 0});
  EXPECT_FALSE(s.verdicts[0].known);
  EXPECT_TRUE(std::isnan(s.verdicts[0].allowed));
  EXPECT_TRUE(s.verdicts[1].known);  // absolute
  EXPECT_FALSE(s.verdicts[2].known);
  EXPECT_TRUE(s.verdicts[3].known);
}

TEST(Swing, ACoarseRecordingSaysWhatItCannotSee) {
  // One reading a second (nvidia-smi's default): the spectrum ends at 0.5 Hz.
  const Swing s = analyse_swing(square(0.2, 200, 700, 1, 600), spec_with_shares(),
                                SwingOptions{1, 10, 100, 1, 700});
  EXPECT_NEAR(s.spectrum.nyquist_hz(), 0.5, 1e-9);
  EXPECT_NE(s.verdicts[3].note.find("seen up to 0.5 Hz"), std::string::npos);
  EXPECT_NEAR(s.period_s, 5, 0.05);
  // A 1 s ramp window on readings 1 s apart sees nothing: unknown, not a pass.
  EXPECT_FALSE(s.verdicts[0].known);
  EXPECT_NE(s.verdicts[0].note.find("too coarse"), std::string::npos);
  EXPECT_TRUE(s.verdicts[2].known);  // the 10 s range window holds ten readings
  // A window other than the spec's is named.
  const Swing t = analyse_swing(square(2, 200, 700, 1e-3, 30), spec_with_shares(),
                                SwingOptions{0.2, 10, 20, 1, 700});
  EXPECT_NE(t.verdicts[0].note.find("the spec's window is 0.1 s"), std::string::npos);
}

TEST(Swing, JsonHoldsTheVerdictsAndASmallSpectrum) {
  const Swing s = analyse_swing(square(2, 200, 700, 1e-3, 60), spec_with_shares(),
                                SwingOptions{0.1, 10, 20, 1, 0});
  const auto j = to_json(s, 100);
  EXPECT_LE(j["spectrum"]["freq_hz"].size(), 100u);
  EXPECT_TRUE(j["verdicts"][0]["allowed"].is_null());
  EXPECT_TRUE(j["verdicts"][0]["pass"].is_null());
  EXPECT_EQ(j["verdicts"][3]["pass"], false);
  EXPECT_NEAR(j["period_s"].get<double>(), 0.5, 0.005);
}

TEST(Swing, RefusesABadScaleOrAShortSeries) {
  EXPECT_THROW(analyse_swing(PowerSeries{0, 1, {1, 2, 3}}, spec_with_shares(), {}),
               std::runtime_error);
  SwingOptions o;
  o.scale = 0;
  EXPECT_THROW(analyse_swing(square(2, 1, 2, 1e-3, 2), spec_with_shares(), o), std::runtime_error);
}

}  // namespace powershape::analysis
