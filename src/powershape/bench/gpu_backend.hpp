#pragma once
#include <memory>
#include <vector>

#include "powershape/bench/backend.hpp"
#include "powershape/telemetry/nvml_source.hpp"
#include "powershape/telemetry/sampler.hpp"

namespace powershape::kernels {
class GpuWorkload;
}

namespace powershape::bench {

// Configurations run as real CUDA kernels on GPU 0 while a sampler records NVML telemetry.
// Built only with CUDA.
class GpuBackend final : public Backend {
 public:
  GpuBackend();  // throws std::runtime_error when there is no driver or GPU
  ~GpuBackend() override;
  std::string describe() const override;
  bool simulated() const override { return false; }
  nlohmann::json device_json() const override;
  double peak_flops_per_s() const override { return peak_flops_; }
  double peak_bytes_per_s() const override { return peak_bytes_; }
  void set_configs(std::vector<workload::Plan> configs) override;
  std::size_t config_count() const override { return configs_.size(); }
  std::string config_name(std::size_t i) const override { return configs_.at(i).name; }
  Measurement measure(std::size_t i, double seconds) override;
  void idle(double seconds) override;
  std::optional<double> temperature_c() override;
  std::optional<double> step_response_ms(std::size_t i) override;

 private:
  kernels::GpuWorkload& workload(std::size_t i);
  void collect();

  telemetry::NvmlSource nvml_;
  telemetry::Sampler sampler_;
  trace::Trace trace_;
  double peak_flops_ = 0, peak_bytes_ = 0;
  std::vector<workload::Plan> configs_;
  std::size_t loaded_ = SIZE_MAX;  // one configuration's buffers are on the GPU at a time
  std::unique_ptr<kernels::GpuWorkload> current_;
};

}  // namespace powershape::bench
