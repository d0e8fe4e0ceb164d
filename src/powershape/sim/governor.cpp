#include "powershape/sim/governor.hpp"

#include <algorithm>
#include <cmath>

#include "powershape/telemetry/signal.hpp"

namespace powershape::sim {

Governor::PowerLoop::PowerLoop(double window_ms, double gain_mhz_per_w_s, double share,
                               double recovery_mhz_per_s, double step_s, double max_mhz)
    : ring(std::max<std::size_t>(1,
                                 static_cast<std::size_t>(std::lround(window_ms * 1e-3 / step_s))),
           0.0),
      gain(gain_mhz_per_w_s),
      limit_share(share),
      recovery(recovery_mhz_per_s),
      cap_mhz(max_mhz) {}

void Governor::PowerLoop::push(double power_w) {
  sum += power_w - ring[head];
  ring[head] = power_w;
  head = (head + 1) % ring.size();
}

void Governor::PowerLoop::update(const Profile& p, double limit_w, double dt, double actual_mhz) {
  const double avg = sum / static_cast<double>(ring.size());
  const double move = std::min(-gain * (avg - limit_share * limit_w), recovery) * dt;
  // No wind-up: while the fast limiter holds the clock under the cap and power is over the
  // limit, the cap comes down from the clock that runs, not from where it was (a real H200's
  // slow loop bites within ~100 ms of a load step, while its fast limiter holds ~1700 MHz).
  const double from = move < 0 ? std::min(cap_mhz, actual_mhz) : cap_mhz;
  cap_mhz = std::clamp(from + move, p.min_mhz, p.max_mhz);
}

Governor::Governor(const Profile& p, double step_s, double power_limit_w, double clock_cap_mhz)
    : p_(p),
      step_s_(step_s),
      limit_w_(power_limit_w > 0 ? power_limit_w : p.power_limit_w),
      user_cap_mhz_(std::min(clock_cap_mhz > 0 ? clock_cap_mhz : p.max_mhz,
                             p.mode_max_mhz > 0 ? p.mode_max_mhz : p.max_mhz)),
      steps_per_update_(std::max(1, static_cast<int>(std::lround(p.update_ms * 1e-3 / step_s)))),
      countdown_(steps_per_update_),
      thermal_cap_mhz_(p.max_mhz) {
  loops_.emplace_back(p.window_ms, p.gain_mhz_per_w_s, 1.0, p.recovery_mhz_per_s, step_s,
                      p.max_mhz);
  if (p.medium_gain_mhz_per_w_s > 0)
    loops_.emplace_back(p.medium_window_ms, p.medium_gain_mhz_per_w_s,
                        p.medium_limit_w / p.power_limit_w, p.recovery_mhz_per_s, step_s,
                        p.max_mhz);
  if (p.spike_gain_mhz_per_w_s > 0)
    loops_.emplace_back(p.spike_window_ms, p.spike_gain_mhz_per_w_s,
                        p.spike_limit_w / p.power_limit_w, p.spike_recovery_mhz_per_s, step_s,
                        p.max_mhz);
  if (p.slowdown_c > 0) {
    steps_per_slowdown_ =
        std::max(1, static_cast<int>(std::lround(p.slowdown_interval_ms * 1e-3 / step_s)));
    slowdown_countdown_ = 1;  // a die already hot is seen on the first step
  }
  if (p.supply_limit_w > 0) {
    supply_ring_.assign(
        std::max<std::size_t>(
            1, static_cast<std::size_t>(std::lround(p.supply_window_ms * 1e-3 / step_s))),
        0.0);
    supply_hold_steps_ = std::max<int64_t>(1, std::llround(p.supply_hold_s / step_s));
  }
}

void Governor::slowdown_update(double temp_c) {
  if (--slowdown_countdown_ > 0) return;
  slowdown_countdown_ = steps_per_slowdown_;
  const int most = static_cast<int>(std::ceil((p_.max_mhz - p_.min_mhz) / p_.slowdown_step_mhz));
  if (temp_c >= p_.slowdown_c)
    slowdown_steps_ = std::min(slowdown_steps_ + 1, most);
  else if (temp_c < p_.slowdown_c - p_.slowdown_hysteresis_c && slowdown_steps_ > 0)
    --slowdown_steps_;
}

void Governor::supply_observe(double power_w) {
  const double box_w = power_w + p_.supply_rest_w;
  supply_sum_ += box_w - supply_ring_[supply_head_];
  supply_ring_[supply_head_] = box_w;
  supply_head_ = (supply_head_ + 1) % supply_ring_.size();
  if (supply_held_ > 0) {
    --supply_held_;
  } else if (supply_sum_ / static_cast<double>(supply_ring_.size()) > p_.supply_limit_w) {
    supply_held_ = supply_hold_steps_;
  }
}

void Governor::observe(double power_w, double temp_c, double actual_mhz) {
  for (auto& l : loops_) l.push(power_w);
  if (p_.slowdown_c > 0) slowdown_update(temp_c);
  if (p_.supply_limit_w > 0) supply_observe(power_w);
  if (--countdown_ > 0) return;
  countdown_ = steps_per_update_;
  const double dt = steps_per_update_ * step_s_;
  for (auto& l : loops_) l.update(p_, limit_w_, dt, actual_mhz);
  const double heat = std::min(-p_.thermal_gain_mhz_per_c_s * (temp_c - p_.max_operating_c),
                               p_.recovery_mhz_per_s) *
                      dt;
  thermal_cap_mhz_ = std::clamp(thermal_cap_mhz_ + heat, p_.min_mhz, p_.max_mhz);
}

double Governor::target_mhz() const {
  double mhz = std::min({p_.max_mhz, user_cap_mhz_, thermal_cap_mhz_});
  for (const auto& l : loops_) mhz = std::min(mhz, l.cap_mhz);
  if (slowdown_steps_ > 0)
    mhz = std::min(mhz, std::max(p_.min_mhz, p_.max_mhz - slowdown_steps_ * p_.slowdown_step_mhz));
  if (supply_held_ > 0) mhz = std::min(mhz, p_.supply_degraded_mhz);
  return mhz;
}

uint64_t Governor::reasons() const {
  namespace r = telemetry::reason;
  uint64_t bits = 0;
  const double tol = 0.5;
  for (const auto& l : loops_)
    if (l.cap_mhz < p_.max_mhz - tol) bits |= r::kSwPowerCap;
  if (thermal_cap_mhz_ < p_.max_mhz - tol || slowdown_steps_ > 0) bits |= r::kSwThermal;
  if (supply_held_ > 0) bits |= r::kHwPowerBrake;
  if (user_cap_mhz_ < p_.max_mhz - tol) bits |= r::kAppClocks;
  return bits;
}

}  // namespace powershape::sim
