#include "powershape/advise/setting.hpp"

#include <gtest/gtest.h>

#include "powershape/util/error.hpp"

namespace powershape::advise {

TEST(Setting, Describes) {
  EXPECT_EQ(Setting{}.describe(), "as found");
  EXPECT_EQ((Setting{1410, 0, ""}).describe(), "clock cap 1410 MHz");
  EXPECT_EQ((Setting{0, 450, ""}).describe(), "power limit 450 W");
  EXPECT_EQ((Setting{0, 0, "30W"}).describe(), "mode 30W");
  EXPECT_EQ(parse_knobs("clock,power").size(), 2u);
  EXPECT_THROW(parse_knobs("clock,volts"), powershape::Error);
  EXPECT_THROW(parse_knobs(""), powershape::Error);
}

TEST(Setting, CandidatesSpanWhatTheDeviceLetsOneSet) {
  SettingRange r;
  r.min_mhz = 345;
  r.max_mhz = 1980;
  r.clock_step_mhz = 15;
  r.min_limit_w = 200;
  r.max_limit_w = 700;
  r.default_limit_w = 700;
  r.modes = {"15W", "MAXN"};
  const auto c = candidate_settings(r, {Knob::kClock, Knob::kPowerLimit, Knob::kMode}, 5);
  ASSERT_FALSE(c.empty());
  EXPECT_TRUE(c.front().is_default());
  int clocks = 0, limits = 0, modes = 0;
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (c[i].clock_cap_mhz > 0) {
      ++clocks;
      EXPECT_GE(c[i].clock_cap_mhz, 600);  // 30% of the maximum
      EXPECT_LT(c[i].clock_cap_mhz, 1980);
      EXPECT_EQ(std::fmod(c[i].clock_cap_mhz, 15), 0);
    }
    if (c[i].power_limit_w > 0) {
      ++limits;
      EXPECT_GE(c[i].power_limit_w, 200);
      EXPECT_LT(c[i].power_limit_w, 700);
    }
    if (!c[i].power_mode.empty()) {
      ++modes;
      EXPECT_EQ(c[i].power_mode, "15W");  // the default mode is the baseline
    }
  }
  EXPECT_EQ(clocks, 5);
  EXPECT_EQ(limits, 5);
  EXPECT_EQ(modes, 1);
  const auto every = exhaustive_settings(r, {Knob::kClock});
  EXPECT_EQ(every.size(), 1u + (1965 - 600) / 15 + 1);
  EXPECT_THROW(candidate_settings(r, {Knob::kClock}, 1), powershape::Error);
}

TEST(Setting, ChoosesTheBestWithinTheSlowdownBound) {
  auto o = [](double ms, double j, double lo, double hi) {
    Outcome x;
    x.ms = ms;
    x.joules = j;
    x.time_ratio = {lo, ms / 10, hi};
    return x;
  };
  // baseline; 20% slower and 30% cheaper; 4% slower and 10% cheaper; 1% faster, 1% cheaper
  const std::vector<Outcome> v = {o(10, 10, 1, 1), o(12, 7, 1.19, 1.21), o(10.4, 9, 1.03, 1.06),
                                  o(9.9, 9.9, 0.98, 1.0)};
  const auto energy = experiment::parse_objective("energy", 700);
  EXPECT_EQ(choose(v, energy, -1, false), 1u);
  EXPECT_EQ(choose(v, energy, 0.05, false), 2u);
  EXPECT_EQ(choose(v, energy, 0.05, true), 3u);  // its interval reaches 6%
  EXPECT_EQ(choose(v, experiment::parse_objective("time", 700), -1, false), 3u);
  EXPECT_EQ(choose({v[0], o(12, 11, 1.2, 1.2)}, energy, -1, false), 0u);  // nothing beats it
  EXPECT_EQ(choose({v[0], o(10, 9.99, 1, 1)}, energy, -1, false), 0u);    // 0.1%: not worth it
}

}  // namespace powershape::advise
