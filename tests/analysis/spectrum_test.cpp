#include "powershape/analysis/spectrum.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace powershape::analysis {
namespace {

// A square wave between `lo` and `hi` W of `hz`, sampled every `dt` s for `seconds`.
std::vector<double> square(double hz, double lo, double hi, double dt, double seconds,
                           double phase_s = 0) {
  std::vector<double> x(static_cast<std::size_t>(std::llround(seconds / dt)));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double t = (static_cast<double>(i) + 0.5) * dt + phase_s;
    x[i] = std::fmod(t * hz, 1.0) < 0.5 ? hi : lo;
  }
  return x;
}

double variance(const std::vector<double>& x) {
  double m = 0, v = 0;
  for (double a : x) m += a;
  m /= static_cast<double>(x.size());
  for (double a : x) v += (a - m) * (a - m);
  return v / static_cast<double>(x.size());
}

}  // namespace

TEST(Spectrum, WelchKeepsTheVarianceParseval) {
  const auto x = square(2, 200, 700, 1e-3, 60);
  const Spectrum s = welch_psd(x, 1e-3, 20);
  EXPECT_NEAR(s.df_hz, 0.05, 1e-12);
  EXPECT_NEAR(s.nyquist_hz(), 500, 1e-9);
  double total = 0;
  for (std::size_t k = 1; k < s.psd.size(); ++k) total += s.psd[k] * s.df_hz;
  // A square wave's variance is its half-amplitude squared: 250^2.
  EXPECT_NEAR(variance(x), 62500, 1);
  EXPECT_NEAR(total, 62500, 62500 * 0.02);
}

TEST(Spectrum, ASquareWavesEnergyLiesInItsOddHarmonics) {
  // The n-th odd harmonic holds 1/n^2 of sum(1/n^2) = pi^2/8: 2, 6, 10, 14 and 18 Hz lie inside
  // 0.1-20 Hz, 96.0% of the energy; 2 Hz alone holds 8/pi^2 = 81.1%.
  const auto x = square(2, 200, 700, 1e-3, 60);
  const Spectrum s = welch_psd(x, 1e-3, 20);
  const double inside = 1 + 1.0 / 9 + 1.0 / 25 + 1.0 / 49 + 1.0 / 81;
  EXPECT_NEAR(band_share(s, 0.1, 20), inside * 8 / (std::numbers::pi * std::numbers::pi), 0.01);
  EXPECT_NEAR(band_share(s, 1.5, 2.5), 8 / (std::numbers::pi * std::numbers::pi), 0.01);
  EXPECT_LT(band_share(s, 0, 1.5), 0.01);
}

TEST(Spectrum, BandShareOfAFlatSeriesIsZero) {
  const Spectrum s = welch_psd(std::vector<double>(1000, 500.0), 1e-2, 5);
  EXPECT_EQ(band_share(s, 0.1, 20), 0);
}

TEST(Spectrum, RepeatPeriodIsTheFundamentalNotAMultiple) {
  for (double hz : {0.3, 1.0, 2.0, 7.0}) {
    const auto x = square(hz, 100, 700, 1e-3, 30);
    EXPECT_NEAR(repeat_period_s(x, 1e-3), 1 / hz, 0.01 / hz) << hz << " Hz";
  }
  // A step of compute and a shorter gap: still one period.
  std::vector<double> step;
  for (int rep = 0; rep < 40; ++rep) {
    step.insert(step.end(), 700, 690.0);  // 0.7 s near the limit
    step.insert(step.end(), 200, 120.0);  // 0.2 s of communication
  }
  EXPECT_NEAR(repeat_period_s(step, 1e-3), 0.9, 0.005);
}

TEST(Spectrum, NoPeriodInNoiseOrAFlatLine) {
  std::vector<double> noise(20000);
  uint64_t z = 12345;
  for (auto& v : noise) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    v = 500 + static_cast<double>(z >> 40) / static_cast<double>(1ULL << 24) * 50;
  }
  EXPECT_EQ(repeat_period_s(noise, 1e-3), 0);
  EXPECT_EQ(repeat_period_s(std::vector<double>(1000, 3.0), 1e-3), 0);
}

TEST(Spectrum, RefusesTooFewSamplesOrABadStep) {
  EXPECT_THROW(welch_psd({1, 2, 3}, 1e-3, 1), std::runtime_error);
  EXPECT_THROW(welch_psd(std::vector<double>(100, 1.0), 0, 1), std::runtime_error);
  EXPECT_THROW(welch_psd(std::vector<double>(100, 1.0), NAN, 1), std::runtime_error);
}

}  // namespace powershape::analysis
