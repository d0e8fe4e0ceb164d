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

 private:
  double ambient_c_, r_die_, a_die_, r_sink_, a_sink_;
  double die_rise_ = 0, sink_rise_ = 0;  // over the sink and over ambient
  double last_dt_ = -1;
  double tau_die_, tau_sink_;
};

}  // namespace powershape::sim
