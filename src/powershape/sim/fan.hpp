#pragma once
#include "powershape/sim/profile.hpp"

namespace powershape::sim {

// The fan of a profile that has one (Profile's fan figures): a linear curve with hysteresis sets
// its target speed from the die temperature, and the speed follows the target with a lag. The
// heat sink's resistance to air follows the speed.
class Fan {
 public:
  // Starts at rest: the speed the curve gives for start_c.
  explicit Fan(const Profile& p, double die_c);
  void step(double die_c, double dt_s);
  double pct() const { return speed_; }
  double target_pct() const;
  double r_sink_c_per_w() const;

 private:
  const Profile& p_;
  double held_c_;  // the temperature the target follows: the die's, less play of hysteresis_c
  double speed_;
  double last_dt_ = -1, a_ = 0;
};

}  // namespace powershape::sim
