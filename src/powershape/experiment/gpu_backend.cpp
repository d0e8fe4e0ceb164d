#include "powershape/experiment/gpu_backend.hpp"

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include "powershape/analysis/series.hpp"
#include "powershape/kernels/clock_probe.hpp"
#include "powershape/kernels/cuda_handles.hpp"
#include "powershape/kernels/gpu_workload.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/trace/json_codec.hpp"

namespace powershape::experiment {

GpuBackend::GpuBackend(const telemetry::SamplerOptions& o) : nvml_({0}), sampler_(nvml_, o) {
  trace_.source = nvml_.describe();
  trace_.devices = nvml_.devices();
  sampler_.start();
  peak_ = kernels::measure_peak_rates();
}

GpuBackend::~GpuBackend() { sampler_.stop(); }

std::string GpuBackend::describe() const {
  const auto& d = nvml_.devices().at(0);
  return d.name + " (GPU " + std::to_string(d.index) + ", driver " + d.driver + ")";
}

nlohmann::json GpuBackend::device_json() const {
  return {{"simulated", false},
          {"device", trace::to_json(nvml_.devices().at(0))},
          {"peak_tflops_measured", peak_.flops_per_s * 1e-12},
          {"copy_gbs_measured", peak_.bytes_per_s * 1e-9}};
}

void GpuBackend::set_configs(std::vector<workload::Plan> configs) {
  configs_ = std::move(configs);
  current_.reset();
  loaded_ = SIZE_MAX;
}

kernels::GpuWorkload& GpuBackend::workload(std::size_t i) {
  if (loaded_ != i) {
    current_.reset();  // free the last configuration's buffers first
    // Its first iteration runs here, outside any window: it times cuBLASLt's candidates for each
    // product, which left a first window with half its iterations and twice its J an iteration
    // (an H100's repro of attention, 2026-12-07, before GpuWorkload ran it when built).
    current_ = std::make_unique<kernels::GpuWorkload>(configs_.at(i).workload, peak_);
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
  m.extra_gib = static_cast<double>(w.extra_bytes()) / (1 << 30);
  // Wait for the counter read after the window, so that counter values bracket it.
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  collect();
  add_telemetry(m, trace_, t0, t1);
  return m;
}

std::vector<workload::KernelTime> GpuBackend::time_kernels(std::size_t i, int iterations) {
  auto& w = workload(i);
  const int64_t t0 = telemetry::steady_now_ns();
  auto kernels = w.time_kernels(iterations);
  const int64_t t1 = telemetry::steady_now_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  collect();
  Measurement m;
  add_telemetry(m, trace_, t0, t1);
  for (auto& k : kernels) {
    k.config = configs_.at(i).name;
    k.sm_clock_mhz = m.sm_clock_mhz;
  }
  return kernels;
}

std::vector<std::pair<double, double>> GpuBackend::probe_clock_step(std::size_t i, double idle_s,
                                                                    double load_s) {
  auto& w = workload(i);
  // Every kernel loaded first: loading a module lazily would wait for the running probe.
  w.run_for(0.05);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // back to idle
  std::vector<double> mhz;
  {
    const kernels::Stream side;
    const int64_t bin_ns = 10'000, total_ns = static_cast<int64_t>((idle_s + load_s) * 1e9);
    kernels::ClockProbe probe(total_ns / bin_ns + 1, bin_ns);
    probe.start(side.get(), total_ns);
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
    w.run_for(load_s);
    mhz = probe.mhz();
  }
  collect();
  std::vector<std::pair<double, double>> out;
  for (std::size_t k = 0; k < mhz.size(); ++k) {
    if (mhz[k] > 0) out.emplace_back(static_cast<double>(k) * 0.01, mhz[k]);
  }
  return out;
}

void GpuBackend::idle(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::optional<double> GpuBackend::temperature_c() {
  collect();
  auto t = analysis::series(trace_, 0, telemetry::Signal::kGpuTemp);
  if (t.empty()) return std::nullopt;
  return static_cast<double>(t.back().value);
}

int64_t GpuBackend::now_ns() const { return telemetry::steady_now_ns(); }

trace::Trace GpuBackend::recorded() {
  collect();
  return trace_;
}

}  // namespace powershape::experiment
