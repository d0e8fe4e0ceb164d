#include "powershape/analysis/spectrum.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <unsupported/Eigen/FFT>

#include "powershape/util/error.hpp"

namespace powershape::analysis {

Spectrum welch_psd(const std::vector<double>& x, double dt_s, double segment_s) {
  if (!(dt_s > 0) || !std::isfinite(dt_s)) throw invalid_input("resolution", "must be above 0 s");
  if (x.size() < 8) throw invalid_input("a spectrum needs at least 8 samples");
  std::size_t len = x.size();
  if (segment_s > 0 && std::isfinite(segment_s))
    len = std::clamp<std::size_t>(static_cast<std::size_t>(std::llround(segment_s / dt_s)), 8,
                                  x.size());
  const std::size_t hop = std::max<std::size_t>(len / 2, 1);
  std::vector<double> window(len);
  double u = 0;
  for (std::size_t i = 0; i < len; ++i) {
    // The periodic Hann window (scipy's default for welch).
    window[i] = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * static_cast<double>(i) /
                                     static_cast<double>(len));
    u += window[i] * window[i];
  }
  Eigen::FFT<double> fft;
  fft.SetFlag(Eigen::FFT<double>::HalfSpectrum);
  Spectrum out{1.0 / (dt_s * static_cast<double>(len)), std::vector<double>(len / 2 + 1, 0.0)};
  std::vector<double> seg(len);
  std::vector<std::complex<double>> f;
  int segments = 0;
  for (std::size_t start = 0; start + len <= x.size(); start += hop, ++segments) {
    double mean = 0;
    for (std::size_t i = 0; i < len; ++i) mean += x[start + i];
    mean /= static_cast<double>(len);
    for (std::size_t i = 0; i < len; ++i) seg[i] = (x[start + i] - mean) * window[i];
    fft.fwd(f, seg);
    for (std::size_t k = 0; k < out.psd.size(); ++k) out.psd[k] += std::norm(f[k]);
  }
  // One-sided density: doubled but for 0 Hz and (an even length's) Nyquist bin.
  const double scale = dt_s / (u * segments);
  for (std::size_t k = 0; k < out.psd.size(); ++k) {
    const bool edge = k == 0 || (len % 2 == 0 && k == len / 2);
    out.psd[k] *= scale * (edge ? 1.0 : 2.0);
  }
  return out;
}

namespace {

// The density summed over the bins above 0 Hz in [lo_hz, hi_hz).
double band_sum(const Spectrum& s, double lo_hz, double hi_hz) {
  double in = 0;
  for (std::size_t k = 1; k < s.psd.size(); ++k) {
    const double f = s.df_hz * static_cast<double>(k);
    if (f >= lo_hz && f < hi_hz) in += s.psd[k];
  }
  return in;
}

}  // namespace

double band_share(const Spectrum& s, double lo_hz, double hi_hz) {
  const double total = band_sum(s, 0, INFINITY);
  return total > 0 ? band_sum(s, lo_hz, hi_hz) / total : 0.0;
}

double band_rms(const Spectrum& s, double lo_hz, double hi_hz) {
  return std::sqrt(band_sum(s, lo_hz, hi_hz) * s.df_hz);
}

double repeat_period_s(const std::vector<double>& x, double dt_s) {
  const std::size_t n = x.size();
  if (n < 8) return 0;
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  std::size_t m = 1;
  while (m < 2 * n) m *= 2;  // zero-padded: the circular correlation is the linear one
  std::vector<double> padded(m, 0.0);
  for (std::size_t i = 0; i < n; ++i) padded[i] = x[i] - mean;
  Eigen::FFT<double> fft;
  std::vector<std::complex<double>> f;
  fft.fwd(f, padded);
  for (auto& c : f) c = std::norm(c);
  std::vector<double> r;
  fft.inv(r, f);
  const double r0 = r[0];
  if (!(r0 > 0)) return 0;
  for (auto& v : r) v /= r0;
  const std::size_t last = n / 2;
  std::size_t k = 1;
  while (k < last && r[k] > 0) ++k;  // past the first zero crossing
  double highest = 0;
  for (std::size_t j = k; j < last; ++j) highest = std::max(highest, r[j]);
  if (highest < 0.2) return 0;
  for (std::size_t j = std::max<std::size_t>(k, 1); j + 1 < last; ++j) {
    if (r[j] >= 0.8 * highest && r[j] >= r[j - 1] && r[j] >= r[j + 1]) {
      // A parabola through the peak and its neighbours places it between samples.
      const double den = r[j - 1] - 2 * r[j] + r[j + 1];
      const double shift = den < 0 ? 0.5 * (r[j - 1] - r[j + 1]) / den : 0.0;
      return (static_cast<double>(j) + shift) * dt_s;
    }
  }
  return 0;
}

}  // namespace powershape::analysis
