#pragma once
#include <cstdint>
#include <vector>

#include "powershape/sim/profile.hpp"

namespace powershape::sim {

// The power manager's slow loops: clock caps driven by power averaged over a window (the SW
// power cap; a second, shorter-window loop where the profile has one) and one driven by die
// temperature, each an integral controller updated every update_ms; plus an optional user
// clock cap. The fast limiter lives in the simulator's step.
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
  // An integral controller on power averaged over a window: the cap moves by gain x (average -
  // limit) x dt each update, rising no faster than the profile's recovery rate.
  struct PowerLoop {
    PowerLoop(double window_ms, double gain_mhz_per_w_s, double limit_share, double step_s,
              double max_mhz);
    void push(double power_w);
    // limit_w: the power limit in force; the loop holds its own share of it.
    void update(const Profile& p, double limit_w, double dt, double actual_mhz);
    std::vector<double> ring;  // per-step power over the window
    std::size_t head = 0;
    double sum = 0, gain, limit_share, cap_mhz;
  };

  const Profile& p_;
  double step_s_, limit_w_, user_cap_mhz_;
  std::vector<PowerLoop> loops_;  // the slow loop, then the medium one where the profile has it
  int steps_per_update_, countdown_;
  double thermal_cap_mhz_;
};

}  // namespace powershape::sim
