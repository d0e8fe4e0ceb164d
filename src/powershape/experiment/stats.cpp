#include "powershape/experiment/stats.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace powershape::experiment {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

Interval ratio_interval(const std::vector<double>& a, const std::vector<double>& b, uint64_t seed,
                        int resamples) {
  if (a.size() != b.size() || a.size() < 2) throw std::invalid_argument("ratio_interval: need two or more pairs");
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
  auto at = [&](double q) { return std::exp(means[static_cast<std::size_t>(q * (resamples - 1))]); };
  return {at(0.025), std::exp(mean(logs)), at(0.975)};
}

}  // namespace powershape::experiment
