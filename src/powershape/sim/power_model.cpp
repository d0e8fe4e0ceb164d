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
}

double PowerModel::static_w(double mem_activity, double temp_c) const {
  return p_.idle_w + p_.memory_w * mem_activity +
         p_.leakage_w * (1 + p_.leakage_per_c * (temp_c - p_.leakage_ref_c));
}

double PowerModel::power_w(double mhz, double activity, double mem_activity, double temp_c) const {
  auto i = static_cast<std::size_t>(std::clamp(mhz - p_.min_mhz, 0.0, static_cast<double>(shape_.size() - 1)));
  return static_w(mem_activity, temp_c) + p_.dynamic_w * activity * shape_[i];
}

double PowerModel::max_clock_under(double limit_w, double activity, double mem_activity,
                                   double temp_c) const {
  if (activity <= 0) return p_.max_mhz;
  const double budget = (limit_w - static_w(mem_activity, temp_c)) / (p_.dynamic_w * activity);
  auto it = std::upper_bound(shape_.begin(), shape_.end(), budget);
  if (it == shape_.begin()) return p_.min_mhz;
  return p_.min_mhz + static_cast<double>(it - shape_.begin() - 1);
}

}  // namespace powershape::sim
