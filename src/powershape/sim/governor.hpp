#pragma once
#include <cstdint>
#include <vector>

#include "powershape/sim/profile.hpp"

namespace powershape::sim {

// The power manager's slow loops: a clock cap driven by power averaged over a window (the SW
// power cap) and one driven by die temperature, each an integral controller updated every
// update_ms; plus an optional user clock cap. The fast limiter lives in the simulator's step.
class Governor {
 public:
  // power_limit_w, clock_cap_mhz: a user's setting, 0 for the profile's own.
  Governor(const Profile& p, double step_s, double power_limit_w, double clock_cap_mhz);
  // actual_mhz: the clock the step ran at (the fast limiter may hold it under the target).
  void observe(double power_w, double temp_c, double actual_mhz);
  // The clock the slow loops allow: what NVML reports as the SM clock under load.
  double target_mhz() const;
  // Clock-event reason bits (NVML's) that hold now.
  uint64_t reasons() const;
  double power_limit_w() const { return limit_w_; }
  // A new power limit from now on (nvidia-smi -pl while running).
  void set_power_limit_w(double w) { limit_w_ = w; }

 private:
  const Profile& p_;
  double step_s_, limit_w_, user_cap_mhz_;
  std::vector<double> window_;  // ring of per-step power over window_ms
  std::size_t head_ = 0;
  double window_sum_ = 0;
  int steps_per_update_, countdown_;
  double power_cap_mhz_, thermal_cap_mhz_;
  double last_temp_c_ = 0;
};

}  // namespace powershape::sim
