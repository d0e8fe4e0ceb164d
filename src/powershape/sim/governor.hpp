#pragma once
#include <cstdint>
#include <vector>

#include "powershape/sim/profile.hpp"

namespace powershape::sim {

// The power manager's slow loops: clock caps driven by power averaged over a window (the SW
// power cap; a second, shorter-window loop and an asymmetric spike loop where the profile has
// them) and one driven by die temperature, each an integral controller updated every update_ms;
// the profile's thermal slowdown (a staircase with hysteresis) and power supply's protection
// where it has them; plus an optional user clock cap. The fast limiter lives in the simulator's
// step.
class Governor {
 public:
  // power_limit_w, clock_cap_mhz: a user's setting, 0 for the profile's own.
  Governor(const Profile& p, double step_s, double power_limit_w, double clock_cap_mhz);
  // actual_mhz: the clock the step ran at (the fast limiter may hold it under the target).
  // Called once a step.
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
    PowerLoop(double window_ms, double gain_mhz_per_w_s, double limit_share,
              double recovery_mhz_per_s, double step_s, double max_mhz);
    void push(double power_w);
    // limit_w: the power limit in force; the loop holds its own share of it.
    void update(const Profile& p, double limit_w, double dt, double actual_mhz);
    std::vector<double> ring;  // per-step power over the window
    std::size_t head = 0;
    double sum = 0, gain, limit_share, recovery, cap_mhz;
  };
  // The thermal slowdown's staircase: steps taken off the clock cap.
  void slowdown_update(double temp_c);
  // The supply's protection: the box's power over its window, and when the hold ends.
  void supply_observe(double power_w);

  const Profile& p_;
  double step_s_, limit_w_, user_cap_mhz_;
  std::vector<PowerLoop> loops_;  // the slow loop, then the medium and spike ones where present
  int steps_per_update_, countdown_;
  double thermal_cap_mhz_;
  int slowdown_steps_ = 0, steps_per_slowdown_ = 1, slowdown_countdown_ = 1;
  std::vector<double> supply_ring_;  // the box's power a step over the supply's window
  std::size_t supply_head_ = 0;
  double supply_sum_ = 0;
  int64_t supply_hold_steps_ = 0, supply_held_ = 0;  // the hold's length, and what is left of it
};

}  // namespace powershape::sim
