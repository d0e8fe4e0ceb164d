#include "powershape/sim/sensor.hpp"

#include <algorithm>
#include <cmath>

namespace powershape::sim {
using telemetry::Reading;
using telemetry::Signal;

Sensor::Sensor(const Profile& p, double step_s, uint64_t seed, double noise, double expected_s)
    : p_(p),
      steps_per_update_(
          std::max(1, static_cast<int>(std::lround(p.sensor_update_ms * 1e-3 / step_s)))),
      steps_per_driver_(
          std::max(1, static_cast<int>(std::lround(p.driver_sample_ms * 1e-3 / step_s)))),
      usage_ring_(std::max<std::size_t>(
          1, static_cast<std::size_t>(std::lround(p.usage_window_ms / p.sensor_update_ms)))),
      rng_(seed),
      noise_(1.0, noise),
      step_s_(step_s) {
  rows_.reserve(static_cast<std::size_t>(expected_s * 1e3 / p.driver_sample_ms +
                                         expected_s * 1e3 / p.sensor_update_ms) +
                16);
}

bool Sensor::step(int64_t t_ns, double power_w, double busy, double mem_busy) {
  energy_j_ += power_w * step_s_;
  busy_sum_ += busy;
  mem_busy_sum_ += mem_busy;
  update_sum_ += power_w;
  driver_sum_ += power_w;
  if (++driver_count_ == steps_per_driver_) {
    telemetry::Sample d;
    d.t_ns = t_ns;
    d[Signal::kDriverPower] =
        Reading::of(std::llround(driver_sum_ / driver_count_ * noise_(rng_) * 1e3));
    rows_.push_back(d);
    driver_sum_ = 0;
    driver_count_ = 0;
  }
  return ++update_count_ >= steps_per_update_;
}

void Sensor::report(int64_t t_ns, double reported_mhz, double temp_c, uint64_t reasons,
                    double fan_pct) {
  const double mean_w = update_sum_ / update_count_;
  usage_ring_[usage_head_] = mean_w;
  usage_head_ = (usage_head_ + 1) % usage_ring_.size();
  usage_filled_ = std::min(usage_filled_ + 1, usage_ring_.size());
  double usage_w = 0;
  for (std::size_t i = 0; i < usage_filled_; ++i) usage_w += usage_ring_[i];
  usage_w /= static_cast<double>(usage_filled_);
  const double util_gpu = busy_sum_ / update_count_, util_mem = mem_busy_sum_ / update_count_;
  update_sum_ = 0;
  update_count_ = 0;
  busy_sum_ = 0;
  mem_busy_sum_ = 0;

  telemetry::Sample s;
  s.t_ns = t_ns;
  const double n = noise_(rng_);
  s[Signal::kPowerInstant] = Reading::of(std::llround(mean_w * n * 1e3));
  s[Signal::kPowerUsage] = Reading::of(std::llround(usage_w * 1e3));
  s[Signal::kPowerAverage] = s[Signal::kPowerUsage];
  s[Signal::kEnergy] = Reading::of(std::llround(energy_j_ * 1e3));
  const double step = p_.clock_step_mhz;
  s[Signal::kSmClock] = Reading::of(std::llround(std::floor(reported_mhz / step + 1e-9) * step));
  s[Signal::kGpuTemp] = Reading::of(std::llround(temp_c));
  s[Signal::kReasons] = Reading::of(static_cast<int64_t>(reasons));
  for (Signal u :
       {Signal::kMemoryPower, Signal::kMemClock, Signal::kMemTemp, Signal::kThrottleSwPower,
        Signal::kThrottleSwThermal, Signal::kThrottleHwThermal, Signal::kThrottleHwPowerBrake}) {
    s[u] = Reading::failed(telemetry::Status::kNotSupported);
  }
  s[Signal::kUtilGpu] = Reading::of(std::llround(std::clamp(util_gpu, 0.0, 1.0) * 100));
  s[Signal::kUtilMem] = Reading::of(std::llround(std::clamp(util_mem, 0.0, 1.0) * 100));
  s[Signal::kFanSpeed] = fan_pct >= 0 ? Reading::of(std::llround(fan_pct))
                                      : Reading::failed(telemetry::Status::kNotSupported);
  rows_.push_back(s);
}

}  // namespace powershape::sim
