#pragma once
#include <memory>
#include <vector>

#include "powershape/experiment/backend.hpp"
#include "powershape/telemetry/nvml_source.hpp"
#include "powershape/telemetry/sampler.hpp"

namespace powershape::kernels {
class GpuWorkload;
}

namespace powershape::experiment {

// Configurations run as real CUDA kernels on GPU 0 while a sampler records NVML telemetry.
// Built only with CUDA.
class GpuBackend final : public Backend {
 public:
  // Records GPU 0 with a sampler of these options. Throws std::runtime_error when there is no
  // driver or GPU.
  explicit GpuBackend(const telemetry::SamplerOptions& o);
  ~GpuBackend() override;
  std::string describe() const override;
  bool simulated() const override { return false; }
  nlohmann::json device_json() const override;
  workload::Rates peak_rates() const override { return peak_; }
  void set_configs(std::vector<workload::Plan> configs) override;
  std::size_t config_count() const override { return configs_.size(); }
  std::string config_name(std::size_t i) const override { return configs_.at(i).name; }
  Measurement measure(std::size_t i, double seconds) override;
  std::vector<workload::KernelTime> time_kernels(std::size_t i, int iterations) override;
  std::vector<std::pair<double, double>> probe_clock_step(std::size_t i, double idle_s,
                                                          double load_s) override;
  void idle(double seconds) override;
  std::optional<double> temperature_c() override;
  int64_t now_ns() const override;
  trace::Trace recorded() override;

 private:
  kernels::GpuWorkload& workload(std::size_t i);
  void collect();

  telemetry::NvmlSource nvml_;
  telemetry::Sampler sampler_;
  trace::Trace trace_;
  workload::Rates peak_;
  std::vector<workload::Plan> configs_;
  std::size_t loaded_ = SIZE_MAX;  // one configuration's buffers are on the GPU at a time
  std::unique_ptr<kernels::GpuWorkload> current_;
};

}  // namespace powershape::experiment
