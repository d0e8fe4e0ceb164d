#include "powershape/bench/gpu_backend.hpp"

#include <chrono>
#include <cstdint>
#include <thread>

#include "powershape/analysis/series.hpp"
#include "powershape/analysis/step_response.hpp"
#include "powershape/kernels/gpu_workload.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/trace/json_codec.hpp"

namespace powershape::bench {

namespace {

// A benchmark can afford the energy counter's ~3 ms reads at the counter's own 100 ms update
// rate (3% of a core), so that a 2 s window spans ~20 counter updates.
telemetry::SamplerOptions sampler_options() {
  telemetry::SamplerOptions o;
  o.slow_period = std::chrono::milliseconds(100);
  return o;
}

}  // namespace

GpuBackend::GpuBackend() : nvml_({0}), sampler_(nvml_, sampler_options()) {
  trace_.source = nvml_.describe();
  trace_.devices = nvml_.devices();
  sampler_.start();
  std::tie(peak_flops_, peak_bytes_) = kernels::measure_peak_rates();
}

GpuBackend::~GpuBackend() { sampler_.stop(); }

std::string GpuBackend::describe() const {
  const auto& d = nvml_.devices().at(0);
  return d.name + " (GPU " + std::to_string(d.index) + ", driver " + d.driver + ")";
}

nlohmann::json GpuBackend::device_json() const {
  return {{"simulated", false}, {"device", trace::to_json(nvml_.devices().at(0))},
          {"peak_tflops_measured", peak_flops_ * 1e-12}, {"copy_gbs_measured", peak_bytes_ * 1e-9}};
}

void GpuBackend::set_configs(std::vector<workload::Plan> configs) {
  configs_ = std::move(configs);
  current_.reset();
  loaded_ = SIZE_MAX;
}

kernels::GpuWorkload& GpuBackend::workload(std::size_t i) {
  if (loaded_ != i) {
    current_.reset();  // free the last configuration's buffers first
    current_ = std::make_unique<kernels::GpuWorkload>(configs_.at(i), peak_flops_, peak_bytes_);
    loaded_ = i;
  }
  return *current_;
}

void GpuBackend::collect() {
  auto rows = sampler_.take();
  trace_.samples.insert(trace_.samples.end(), rows.begin(), rows.end());
}

Measurement GpuBackend::measure(std::size_t i, double seconds) {
  auto& w = workload(i);
  const int64_t t0 = telemetry::steady_now_ns();
  auto run = w.run_for(seconds);
  const int64_t t1 = telemetry::steady_now_ns();
  Measurement m;
  m.config = i;
  m.iterations = run.iterations;
  m.seconds = static_cast<double>(t1 - t0) * 1e-9;
  m.ms_per_iteration = run.ms_per_iteration;
  m.compute_tflops = run.compute_ms > 0 ? run.compute_flops / run.compute_ms * 1e-9 : 0;
  // Wait for the counter read after the window, so that counter values bracket it.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  collect();
  add_telemetry(m, trace_, t0, t1);
  return m;
}

void GpuBackend::idle(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

std::optional<double> GpuBackend::temperature_c() {
  collect();
  auto t = analysis::series(trace_, 0, telemetry::Signal::kGpuTemp);
  if (t.empty()) return std::nullopt;
  return static_cast<double>(t.back().value);
}

std::optional<double> GpuBackend::step_response_ms(std::size_t i) {
  auto& w = workload(i);
  idle(1.5);
  const int64_t step = telemetry::steady_now_ns();
  w.run_for(1.5);
  collect();
  const auto& d = nvml_.devices().at(0);
  const double max_mhz = d.max_sm_clock_mhz.ok() ? static_cast<double>(d.max_sm_clock_mhz.value) : 1980;
  return analysis::step_response_ms(trace_, 0, 0, static_cast<int64_t>(max_mhz * 0.95), step);
}

}  // namespace powershape::bench
