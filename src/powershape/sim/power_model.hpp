#pragma once
#include <vector>

#include "powershape/sim/profile.hpp"

namespace powershape::sim {

// What the GPU draws at a clock, an SM activity, a memory activity and a die temperature, and
// the highest clock that keeps that draw under a limit.
class PowerModel {
 public:
  explicit PowerModel(const Profile& p);
  double power_w(double mhz, double activity, double mem_activity, double temp_c) const {
    return base_w(temp_c) + power_above_base_w(mhz, activity, mem_activity);
  }
  // The parts of power_w: what the die draws at a temperature whatever it does, and the rest.
  double base_w(double temp_c) const;
  double power_above_base_w(double mhz, double activity, double mem_activity) const;
  // Highest clock (at 1 MHz resolution, at least min_mhz) whose power stays <= limit_w.
  double max_clock_under(double limit_w, double activity, double mem_activity, double temp_c) const;

 private:
  const Profile& p_;
  std::vector<double> shape_;    // (V/Vmax)^2 x f/fmax at min_mhz + i MHz, ascending
  std::vector<double> inverse_;  // highest clock with shape <= i / (size - 1) x shape_.back()
};

}  // namespace powershape::sim
