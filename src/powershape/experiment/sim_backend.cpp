#include "powershape/experiment/sim_backend.hpp"

#include <algorithm>

namespace powershape::experiment {

SimBackend::SimBackend(const sim::Profile& p, const sim::DeviceOptions& o) : options_(o) {
  devices_.emplace_back(p, o);
}

bool SimBackend::each_config_apart() const {
  const sim::Profile& p = profile();
  return p.slowdown_c > 0 || p.spike_gain_mhz_per_w_s > 0 || p.supply_limit_w > 0;
}

void SimBackend::set_configs(std::vector<workload::Plan> configs) {
  configs_ = std::move(configs);
  if (each_config_apart()) {
    while (devices_.size() < configs_.size()) devices_.emplace_back(profile(), options_);
  }
}

sim::SimDevice& SimBackend::device_of(std::size_t config) {
  return devices_.at(devices_.size() > 1 ? config : 0);
}

void SimBackend::idle(double seconds) {
  for (auto& d : devices_) d.idle(seconds);
}

std::optional<double> SimBackend::temperature_c() {
  double hottest = devices_.front().die_c();
  for (const auto& d : devices_) hottest = std::max(hottest, d.die_c());
  return hottest;
}

std::string SimBackend::describe() const {
  return "simulated " + profile().name + " (" + profile().status + " profile)";
}

nlohmann::json SimBackend::device_json() const {
  const auto& p = profile();
  return {{"simulated", true}, {"profile", sim::to_json(p)}};
}

Measurement SimBackend::measure(std::size_t i, double seconds) {
  const workload::Plan& plan = configs_.at(i);
  sim::SimDevice& device = device_of(i);
  sim::RunRecord r = device.run(plan, 0, seconds);
  Measurement m;
  m.config = i;
  m.iterations = r.iterations;
  m.seconds = static_cast<double>(r.end_ns - r.begin_ns) * 1e-9;
  m.ms_per_iteration = m.seconds * 1e3 / r.iterations;
  // As the GPU backend counts it: over a square wave's bursts, else over the whole iteration
  // (an LM head's softmax is part of its step).
  const bool square = std::holds_alternative<workload::Square>(plan.workload.kind);
  double flops = 0, ns = 0;
  for (std::size_t p = 0; p < plan.phases.size(); ++p) {
    const auto& ph = plan.phases[p];
    flops += ph.flops * r.iterations;
    if (!square || ph.kind == workload::PhaseKind::kCompute) ns += r.clocks[p].ns;
  }
  m.compute_tflops = ns > 0 ? flops / ns * 1e-3 : 0;
  add_telemetry(m, device.trace(), r.begin_ns, r.end_ns);
  return m;
}

std::vector<workload::KernelTime> SimBackend::time_kernels(std::size_t i, int iterations) {
  const workload::Plan& plan = configs_.at(i);
  sim::SimDevice& device = device_of(i);
  sim::RunRecord r = device.run(plan, iterations, 0);
  std::vector<std::vector<double>> ms(plan.phases.size());
  for (std::size_t e = 0; e < r.ends_ns.size(); ++e) {
    const sim::PhaseRecord x = r.phase(e);
    ms[static_cast<std::size_t>(x.phase)].push_back(static_cast<double>(x.end_ns - x.begin_ns) *
                                                    1e-6);
  }
  Measurement m;
  add_telemetry(m, device.trace(), r.begin_ns, r.end_ns);
  std::vector<workload::KernelTime> out;
  for (std::size_t p = 0; p < plan.phases.size(); ++p) {
    const auto& ph = plan.phases[p];
    if (ph.kind == workload::PhaseKind::kIdle || ms[p].empty()) continue;
    std::sort(ms[p].begin(), ms[p].end());
    workload::KernelTime k;
    k.config = plan.name;
    k.index = static_cast<int>(out.size());
    k.name = ph.name;
    k.m = ph.m;
    k.n = ph.n;
    k.k = ph.k;
    k.bytes = ph.bytes;
    k.ms = ms[p][ms[p].size() / 2];
    k.sm_clock_mhz = m.sm_clock_mhz;
    k.real_mhz = r.clocks[p].mhz;
    out.push_back(k);
  }
  return out;
}

}  // namespace powershape::experiment
