#pragma once
#include "powershape/sim/profile.hpp"

namespace powershape::sim {

// Die and heat sink as two first-order RC stages to ambient.
class Thermal {
 public:
  explicit Thermal(const Profile& p);
  void step(double power_w, double dt_s);
  double die_c() const { return ambient_c_ + sink_rise_ + die_rise_; }
  // The air around the device changes (a rack warming up); the rises above it carry on.
  void set_ambient_c(double c) { ambient_c_ = c; }
  // The heat sink's resistance to air changes (its fan's speed); its heat capacity stays.
  void set_r_sink_c_per_w(double r);

 private:
  double ambient_c_, r_die_, a_die_, r_sink_, a_sink_;
  double die_rise_ = 0, sink_rise_ = 0;  // over the sink and over ambient
  double last_dt_ = -1;
  double tau_die_, tau_sink_;
  double sink_capacity_;  // J/C: tau_sink / r_sink
};

}  // namespace powershape::sim
