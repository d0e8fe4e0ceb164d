#pragma once
// A backend for the engine's tests, without a device.
#include <random>
#include <vector>

#include "powershape/experiment/backend.hpp"

namespace powershape::experiment {

// A deterministic backend: configuration i takes base_ms x effect[i] per iteration with a
// seeded relative noise; its power and clock settle over the first `settle` measurements.
class FakeBackend : public Backend {
 public:
  // wander: once settled, clock and power still move by this share from window to window (+,
  // -, -, + in turn), as a power controller hunting around its limit makes them.
  FakeBackend(std::vector<double> effect, double noise, uint64_t seed, int settle = 4,
              double wander = 0)
      : effect_(std::move(effect)),
        noise_(0, noise),
        rng_(seed),
        settle_(settle),
        wander_(wander) {}
  std::string describe() const override { return "fake"; }
  bool simulated() const override { return true; }
  nlohmann::json device_json() const override { return {{"fake", true}}; }
  workload::Rates peak_rates() const override { return {1e15, 1e12}; }
  void set_configs(std::vector<workload::Plan>) override {}
  std::size_t config_count() const override { return effect_.size(); }
  std::string config_name(std::size_t i) const override { return "c" + std::to_string(i); }
  Measurement measure(std::size_t i, double seconds) override {
    order.push_back(i);
    ++calls_;
    Measurement m;
    m.config = i;
    m.seconds = seconds;
    m.iterations = 100;
    m.ms_per_iteration = 10 * effect_[i] * (1 + noise_(rng_));
    m.energy_j = 5 * m.iterations * effect_[i] * (1 + noise_(rng_));
    const double swing = (calls_ % 4 == 1 || calls_ % 4 == 0) ? wander_ : -wander_;
    const double warm =
        calls_ < settle_ ? 1.0 - 0.1 * (settle_ - calls_) : 1.0 + swing;  // 1980 -> settled
    m.sm_clock_mhz = 1600 / warm;
    m.avg_power_w = 700 * warm;
    return m;
  }
  void idle(double) override {}
  std::optional<double> temperature_c() override { return 50; }
  int64_t now_ns() const override { return 0; }
  trace::Trace recorded() override { return {}; }
  std::vector<std::size_t> order;

 private:
  std::vector<double> effect_;
  std::normal_distribution<double> noise_;
  std::mt19937_64 rng_;
  int settle_, calls_ = 0;
  double wander_;
};

}  // namespace powershape::experiment
