#pragma once
#include <vector>

#include "powershape/bench/backend.hpp"
#include "powershape/sim/simulator.hpp"

namespace powershape::bench {

// Configurations run on one simulated GPU, whose state carries over between them.
class SimBackend final : public Backend {
 public:
  SimBackend(const sim::Profile& p, const sim::DeviceOptions& o);
  std::string describe() const override;
  bool simulated() const override { return true; }
  nlohmann::json device_json() const override;
  double peak_flops_per_s() const override;
  double peak_bytes_per_s() const override;
  void set_configs(std::vector<workload::Plan> configs) override { configs_ = std::move(configs); }
  std::size_t config_count() const override { return configs_.size(); }
  std::string config_name(std::size_t i) const override { return configs_.at(i).name; }
  Measurement measure(std::size_t i, double seconds) override;
  void idle(double seconds) override { device_.idle(seconds); }
  std::optional<double> temperature_c() override { return device_.die_c(); }
  std::optional<double> step_response_ms(std::size_t i) override;

 private:
  std::vector<workload::Plan> configs_;
  sim::SimDevice device_;
};

}  // namespace powershape::bench
