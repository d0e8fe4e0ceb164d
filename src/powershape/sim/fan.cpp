#include "powershape/sim/fan.hpp"

#include <algorithm>
#include <cmath>

namespace powershape::sim {

Fan::Fan(const Profile& p, double die_c) : p_(p), held_c_(die_c), speed_(0) {
  speed_ = target_pct();
}

double Fan::target_pct() const {
  const double share = (held_c_ - p_.fan_start_c) / (p_.fan_full_c - p_.fan_start_c);
  return p_.fan_min_pct + (100 - p_.fan_min_pct) * std::clamp(share, 0.0, 1.0);
}

void Fan::step(double die_c, double dt_s) {
  // Backlash: a rising die drags the held temperature up with it; a falling one moves it only
  // once it is hysteresis_c below, so the fan does not hunt around one temperature.
  if (die_c > held_c_)
    held_c_ = die_c;
  else if (die_c < held_c_ - p_.fan_hysteresis_c)
    held_c_ = die_c + p_.fan_hysteresis_c;
  if (dt_s != last_dt_) {
    a_ = std::exp(-dt_s / p_.fan_tau_s);
    last_dt_ = dt_s;
  }
  const double target = target_pct();
  speed_ = target + (speed_ - target) * a_;
}

double Fan::r_sink_c_per_w() const {
  const double g_min = 1 / p_.fan_r_sink_at_min_c_per_w, g_full = 1 / p_.r_sink_c_per_w;
  const double share = (speed_ - p_.fan_min_pct) / (100 - p_.fan_min_pct);
  return 1 / (g_min + (g_full - g_min) * std::clamp(share, 0.0, 1.0));
}

}  // namespace powershape::sim
