#pragma once
#include <vector>

#include "powershape/sim/profile.hpp"

namespace powershape::sim {

// What the GPU draws at a clock, an SM activity, a memory activity and a die temperature, and
// the highest clock that keeps that draw under a limit.
class PowerModel {
 public:
  explicit PowerModel(const Profile& p);
  double power_w(double mhz, double activity, double mem_activity, double temp_c) const;
  // Highest clock (at 1 MHz resolution, at least min_mhz) whose power stays <= limit_w.
  double max_clock_under(double limit_w, double activity, double mem_activity, double temp_c) const;

 private:
  double static_w(double mem_activity, double temp_c) const;
  const Profile& p_;
  std::vector<double> shape_;  // (V/Vmax)^2 x f/fmax at min_mhz + i MHz, ascending
  std::vector<double> inverse_;  // highest clock with shape <= i / (size - 1) x shape_.back()
};

}  // namespace powershape::sim
