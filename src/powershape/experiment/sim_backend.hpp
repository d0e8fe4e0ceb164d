#pragma once
#include <algorithm>
#include <deque>
#include <vector>

#include "powershape/experiment/backend.hpp"
#include "powershape/sim/simulator.hpp"

namespace powershape::experiment {

// Configurations run on one simulated GPU, whose state carries over between them; or, where the
// profile has a mechanism that holds state across windows (each_config_apart), each on its own.
class SimBackend final : public Backend {
 public:
  SimBackend(const sim::Profile& p, const sim::DeviceOptions& o);
  std::string describe() const override;
  bool simulated() const override { return true; }
  double ratio_error() const override { return profile().chunk_ratio_points / 100; }
  double thermal_time_constant_s() const override {
    const sim::Profile& p = profile();
    return std::max({p.tau_die_s, p.tau_sink_s, p.fan_tau_s});
  }
  bool each_config_apart() const override;
  nlohmann::json device_json() const override;
  workload::Rates peak_rates() const override {
    return {profile().peak_flops_per_s(), profile().peak_bytes_per_s()};
  }
  void set_configs(std::vector<workload::Plan> configs) override;
  std::size_t config_count() const override { return configs_.size(); }
  std::string config_name(std::size_t i) const override { return configs_.at(i).name; }
  Measurement measure(std::size_t i, double seconds) override;
  std::vector<workload::KernelTime> time_kernels(std::size_t i, int iterations) override;
  void idle(double seconds) override;              // every die idles
  std::optional<double> temperature_c() override;  // the hottest die
  int64_t now_ns() const override { return devices_.front().now_ns(); }
  trace::Trace recorded() override { return devices_.front().trace(); }  // the first die's

 private:
  const sim::Profile& profile() const { return devices_.front().profile(); }
  sim::SimDevice& device_of(std::size_t config);
  std::vector<workload::Plan> configs_;
  sim::DeviceOptions options_;
  std::deque<sim::SimDevice> devices_;  // one, or one a configuration (each_config_apart)
};

}  // namespace powershape::experiment
