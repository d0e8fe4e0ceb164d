#pragma once
#include <algorithm>
#include <vector>

#include "powershape/experiment/backend.hpp"
#include "powershape/sim/simulator.hpp"

namespace powershape::experiment {

// Configurations run on one simulated GPU, whose state carries over between them.
class SimBackend final : public Backend {
 public:
  SimBackend(const sim::Profile& p, const sim::DeviceOptions& o);
  std::string describe() const override;
  bool simulated() const override { return true; }
  double ratio_error() const override { return device_.profile().chunk_ratio_points / 100; }
  double thermal_time_constant_s() const override {
    const sim::Profile& p = device_.profile();
    return std::max({p.tau_die_s, p.tau_sink_s, p.fan_tau_s});
  }
  nlohmann::json device_json() const override;
  workload::Rates peak_rates() const override {
    return {device_.profile().peak_flops_per_s(), device_.profile().peak_bytes_per_s()};
  }
  void set_configs(std::vector<workload::Plan> configs) override { configs_ = std::move(configs); }
  std::size_t config_count() const override { return configs_.size(); }
  std::string config_name(std::size_t i) const override { return configs_.at(i).name; }
  Measurement measure(std::size_t i, double seconds) override;
  std::vector<workload::KernelTime> time_kernels(std::size_t i, int iterations) override;
  void idle(double seconds) override { device_.idle(seconds); }
  std::optional<double> temperature_c() override { return device_.die_c(); }
  int64_t now_ns() const override { return device_.now_ns(); }
  trace::Trace recorded() override { return device_.trace(); }

 private:
  std::vector<workload::Plan> configs_;
  sim::SimDevice device_;
};

}  // namespace powershape::experiment
