#include "powershape/experiment/stats.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::experiment {
namespace {

// P(|T| <= t) for Student's t with an integer `nu` degrees of freedom, in closed form
// (Abramowitz and Stegun 26.7.3 and 26.7.4).
double t_central(double t, int nu) {
  const double theta = std::atan(t / std::sqrt(static_cast<double>(nu)));
  const double c2 = std::cos(theta) * std::cos(theta), s = std::sin(theta);
  if (nu % 2 == 0) {
    double term = 1, sum = 1;
    for (int k = 2; k <= nu - 2; k += 2) {
      term *= c2 * (k - 1) / k;
      sum += term;
    }
    return s * sum;
  }
  double sum = 0;
  if (nu > 1) {
    double term = std::cos(theta);
    sum = term;
    for (int k = 3; k <= nu - 2; k += 2) {
      term *= c2 * (k - 1) / k;
      sum += term;
    }
  }
  return 2 / M_PI * (theta + s * sum);
}

// Student's t quantile: the t with P(|T| <= t) = 1 - alpha, by bisection.
double t_quantile(double alpha, int nu) {
  double lo = 0, hi = 1e6;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (t_central(mid, nu) < 1 - alpha ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

double expanded_tail(int n, double alpha) {
  const double t = t_quantile(alpha, n - 1);
  const double z = std::sqrt(static_cast<double>(n) / (n - 1)) * t;
  return 0.5 * std::erfc(z / std::sqrt(2.0));  // Phi(-z)
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

Interval ratio_interval(const std::vector<double>& a, const std::vector<double>& b, uint64_t seed,
                        int resamples) {
  if (a.size() != b.size() || a.size() < 2)
    throw invalid_input("ratio_interval: need two or more pairs");
  std::vector<double> logs;
  for (std::size_t i = 0; i < a.size(); ++i) logs.push_back(std::log(a[i] / b[i]));
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, logs.size() - 1);
  std::vector<double> means(static_cast<std::size_t>(resamples));
  std::vector<double> sample(logs.size());
  for (auto& m : means) {
    for (auto& x : sample) x = logs[pick(rng)];
    m = mean(sample);
  }
  std::sort(means.begin(), means.end());
  auto at = [&](double q) {
    return std::exp(means[static_cast<std::size_t>(std::lround(q * (resamples - 1)))]);
  };
  const int n = static_cast<int>(logs.size());
  const double tail = expanded_tail(n, 0.05);
  // Resamples never reach past the pairs themselves, which leaves the bootstrap too narrow with
  // under ~6 pairs: the interval is at least as wide as Student's t interval on the log ratios.
  const double m = mean(logs);
  double ss = 0;
  for (double x : logs) ss += (x - m) * (x - m);
  const double half = t_quantile(0.05, n - 1) * std::sqrt(ss / (n - 1) / n);
  return {std::min(at(tail), std::exp(m - half)), std::exp(m),
          std::max(at(1 - tail), std::exp(m + half))};
}

}  // namespace powershape::experiment
