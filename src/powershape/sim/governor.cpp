#include "powershape/sim/governor.hpp"

#include <algorithm>
#include <cmath>

#include "powershape/telemetry/signal.hpp"

namespace powershape::sim {

Governor::Governor(const Profile& p, double step_s, double power_limit_w, double clock_cap_mhz)
    : p_(p),
      step_s_(step_s),
      limit_w_(power_limit_w > 0 ? power_limit_w : p.power_limit_w),
      user_cap_mhz_(std::min(clock_cap_mhz > 0 ? clock_cap_mhz : p.max_mhz,
                             p.mode_max_mhz > 0 ? p.mode_max_mhz : p.max_mhz)),
      window_(std::max<std::size_t>(
                  1, static_cast<std::size_t>(std::lround(p.window_ms * 1e-3 / step_s))),
              0.0),
      steps_per_update_(std::max(1, static_cast<int>(std::lround(p.update_ms * 1e-3 / step_s)))),
      countdown_(steps_per_update_),
      power_cap_mhz_(p.max_mhz),
      thermal_cap_mhz_(p.max_mhz) {}

void Governor::observe(double power_w, double temp_c, double actual_mhz) {
  window_sum_ += power_w - window_[head_];
  window_[head_] = power_w;
  head_ = (head_ + 1) % window_.size();
  last_temp_c_ = temp_c;
  if (--countdown_ > 0) return;
  countdown_ = steps_per_update_;
  const double dt = steps_per_update_ * step_s_;
  const double avg = window_sum_ / static_cast<double>(window_.size());
  const double move = std::min(-p_.gain_mhz_per_w_s * (avg - limit_w_), p_.recovery_mhz_per_s) * dt;
  // No wind-up: while the fast limiter holds the clock under the cap and power is over the
  // limit, the cap comes down from the clock that runs, not from where it was (a real H200's
  // slow loop bites within ~100 ms of a load step, while its fast limiter holds ~1700 MHz).
  const double from = move < 0 ? std::min(power_cap_mhz_, actual_mhz) : power_cap_mhz_;
  power_cap_mhz_ = std::clamp(from + move, p_.min_mhz, p_.max_mhz);
  const double heat = std::min(-p_.thermal_gain_mhz_per_c_s * (temp_c - p_.max_operating_c),
                               p_.recovery_mhz_per_s) *
                      dt;
  thermal_cap_mhz_ = std::clamp(thermal_cap_mhz_ + heat, p_.min_mhz, p_.max_mhz);
}

double Governor::target_mhz() const {
  return std::min({p_.max_mhz, user_cap_mhz_, power_cap_mhz_, thermal_cap_mhz_});
}

uint64_t Governor::reasons() const {
  namespace r = telemetry::reason;
  uint64_t bits = 0;
  const double tol = 0.5;
  if (power_cap_mhz_ < p_.max_mhz - tol) bits |= r::kSwPowerCap;
  if (thermal_cap_mhz_ < p_.max_mhz - tol) bits |= r::kSwThermal;
  if (user_cap_mhz_ < p_.max_mhz - tol) bits |= r::kAppClocks;
  return bits;
}

}  // namespace powershape::sim
