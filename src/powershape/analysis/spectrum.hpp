#pragma once
// Where a power series' variation sits in frequency (Welch's averaged periodogram, as
// scipy.signal.welch computes it with a Hann window, half-overlapping segments and each
// segment's mean removed), and the period it repeats with. The FFT is Eigen's.
#include <vector>

namespace powershape::analysis {

// One-sided power spectral density: bin k is at k * df_hz, in W^2/Hz. Summed times df_hz over
// every bin above 0 Hz it gives the series' variance (Parseval), so a band's share of the
// variation's energy is a ratio of sums.
struct Spectrum {
  double df_hz = 0;
  std::vector<double> psd;
  double nyquist_hz() const {
    return df_hz * static_cast<double>(psd.empty() ? 0 : psd.size() - 1);
  }
};

// Welch's estimate over segments of `segment_s` (the whole series when it is shorter). Throws
// (invalid input) on fewer than 8 samples or a non-positive dt.
Spectrum welch_psd(const std::vector<double>& x, double dt_s, double segment_s);

// The share of the variation's energy (every bin above 0 Hz) in [lo_hz, hi_hz); 0 when the
// series does not vary. Bins past the Nyquist frequency do not exist: the caller says so.
double band_share(const Spectrum& s, double lo_hz, double hi_hz);
// The RMS of the variation inside [lo_hz, hi_hz), in W: the square root of the band's part of the
// variance (a sine of amplitude A inside the band gives A/sqrt(2)).
double band_rms(const Spectrum& s, double lo_hz, double hi_hz);

// The period the series repeats with, from its autocorrelation: the first peak past the first
// zero crossing that reaches 80% of the highest one (so a multiple of the period is not taken),
// refined between samples. 0 when none reaches 0.2 of the variance (no period) or the series
// does not vary.
double repeat_period_s(const std::vector<double>& x, double dt_s);

}  // namespace powershape::analysis
