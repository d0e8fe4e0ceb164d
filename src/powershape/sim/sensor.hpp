#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "powershape/sim/profile.hpp"
#include "powershape/telemetry/sample.hpp"

namespace powershape::sim {

// What NVML would report about the simulated GPU: readings that change every sensor_update_ms
// (instantaneous power as the mean over the last update, power usage as the mean over
// usage_window_ms, the energy counter, the clock the governor allows, temperature, reasons) and
// the driver's power buffer (the mean over each driver_sample_ms). Power readings carry a small
// seeded noise.
class Sensor {
 public:
  // expected_s: how long the run will be, if known, to size the row buffer once.
  Sensor(const Profile& p, double step_s, uint64_t seed, double noise, double expected_s = 0);
  // One simulation step ending at t_ns, a fraction `busy` of it running kernels and `mem_busy`
  // of it moving memory at full bandwidth (NVML's utilisation rates); true when the readings are
  // due for an update, which the caller then gives through report().
  bool step(int64_t t_ns, double power_w, double busy, double mem_busy);
  // fan_pct: the fan's speed; negative where the device has none (not supported).
  void report(int64_t t_ns, double reported_mhz, double temp_c, uint64_t reasons,
              double fan_pct = -1);
  std::vector<telemetry::Sample>& rows() { return rows_; }

 private:
  const Profile& p_;
  int steps_per_update_, steps_per_driver_;
  int update_count_ = 0, driver_count_ = 0;
  double update_sum_ = 0, driver_sum_ = 0, energy_j_ = 0, busy_sum_ = 0, mem_busy_sum_ = 0;
  std::vector<double> usage_ring_;  // per-update means over usage_window_ms
  std::size_t usage_head_ = 0, usage_filled_ = 0;
  std::mt19937_64 rng_;
  std::normal_distribution<double> noise_;
  std::vector<telemetry::Sample> rows_;
  double step_s_;
};

}  // namespace powershape::sim
