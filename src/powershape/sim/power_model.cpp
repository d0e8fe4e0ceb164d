#include "powershape/sim/power_model.hpp"

#include <algorithm>
#include <cmath>

namespace powershape::sim {

PowerModel::PowerModel(const Profile& p) : p_(p) {
  const double vmax = p.volts(p.max_mhz);
  for (double f = p.min_mhz; f <= p.max_mhz; f += 1) {
    double v = p.volts(f) / vmax;
    shape_.push_back(v * v * f / p.max_mhz);
  }
  // The inverse, tabulated finely enough (8192 bins over the shape's range) that a lookup is
  // within 1 MHz of the binary search it replaces on the hot path.
  constexpr std::size_t kBins = 8192;
  inverse_.resize(kBins + 1);
  for (std::size_t i = 0; i <= kBins; ++i) {
    const double budget = shape_.back() * static_cast<double>(i) / kBins;
    auto it = std::upper_bound(shape_.begin(), shape_.end(), budget);
    inverse_[i] =
        it == shape_.begin() ? p.min_mhz : p.min_mhz + static_cast<double>(it - shape_.begin() - 1);
  }
}

double PowerModel::base_w(double temp_c) const {
  return p_.idle_w + p_.leakage_w * (1 + p_.leakage_per_c * (temp_c - p_.leakage_ref_c));
}

double PowerModel::power_above_base_w(double mhz, double activity, double mem_activity) const {
  auto i = static_cast<std::size_t>(
      std::clamp(mhz - p_.min_mhz, 0.0, static_cast<double>(shape_.size() - 1)));
  return p_.memory_w * mem_activity + p_.dynamic_w * activity * shape_[i];
}

double PowerModel::max_clock_under(double limit_w, double activity, double mem_activity,
                                   double temp_c) const {
  if (activity <= 0) return p_.max_mhz;
  const double budget =
      (limit_w - base_w(temp_c) - p_.memory_w * mem_activity) / (p_.dynamic_w * activity);
  if (budget >= shape_.back()) return p_.max_mhz;
  if (budget < shape_.front()) return p_.min_mhz;
  const auto bin =
      static_cast<std::size_t>(budget / shape_.back() * static_cast<double>(inverse_.size() - 1));
  return inverse_[bin];
}

}  // namespace powershape::sim
