#include "powershape/sim/thermal.hpp"

#include <cmath>

namespace powershape::sim {

Thermal::Thermal(const Profile& p)
    : ambient_c_(p.ambient_c),
      r_die_(p.r_die_c_per_w),
      a_die_(0),
      r_sink_(p.r_sink_c_per_w),
      a_sink_(0),
      tau_die_(p.tau_die_s),
      tau_sink_(p.tau_sink_s),
      sink_capacity_(p.r_sink_c_per_w > 0 ? p.tau_sink_s / p.r_sink_c_per_w : 0) {}

void Thermal::set_r_sink_c_per_w(double r) {
  if (r == r_sink_ || !(sink_capacity_ > 0)) return;
  r_sink_ = r;
  tau_sink_ = sink_capacity_ * r;
  last_dt_ = -1;  // the decay factor again at the next step
}

void Thermal::step(double power_w, double dt_s) {
  if (dt_s != last_dt_) {  // exact decay factors for this step size, computed once
    a_die_ = std::exp(-dt_s / tau_die_);
    a_sink_ = std::exp(-dt_s / tau_sink_);
    last_dt_ = dt_s;
  }
  die_rise_ = power_w * r_die_ + (die_rise_ - power_w * r_die_) * a_die_;
  sink_rise_ = power_w * r_sink_ + (sink_rise_ - power_w * r_sink_) * a_sink_;
}

}  // namespace powershape::sim
