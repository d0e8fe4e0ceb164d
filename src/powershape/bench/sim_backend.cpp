#include "powershape/bench/sim_backend.hpp"

#include <algorithm>

#include "powershape/analysis/step_response.hpp"

namespace powershape::bench {

SimBackend::SimBackend(const sim::Profile& p, const sim::DeviceOptions& o) : device_(p, o) {}

double SimBackend::peak_flops_per_s() const {
  const auto& p = device_.profile();
  return p.flops_per_cycle * p.max_mhz * 1e6;
}

double SimBackend::peak_bytes_per_s() const { return device_.profile().mem_bandwidth_gbs * 1e9; }

std::optional<double> SimBackend::step_response_ms(std::size_t i) {
  device_.idle(1.5);
  const int64_t step_ns = device_.now_ns();
  device_.run(configs_.at(i), 0, 1.5);
  const auto& p = device_.profile();
  return analysis::step_response_ms(device_.trace(), 0, 0, static_cast<int64_t>(p.max_mhz * 0.95), step_ns);
}

std::string SimBackend::describe() const {
  return "simulated " + device_.profile().name + " (" + device_.profile().status + " profile)";
}

nlohmann::json SimBackend::device_json() const {
  const auto& p = device_.profile();
  return {{"simulated", true}, {"profile", sim::to_json(p)}};
}

Measurement SimBackend::measure(std::size_t i, double seconds) {
  const workload::Plan& plan = configs_.at(i);
  sim::RunRecord r = device_.run(plan, 0, seconds);
  Measurement m;
  m.config = i;
  m.iterations = r.iterations;
  m.seconds = static_cast<double>(r.end_ns - r.begin_ns) * 1e-9;
  m.ms_per_iteration = m.seconds * 1e3 / r.iterations;
  double flops = 0, ns = 0;
  for (const auto& x : r.phases) {
    const auto& ph = plan.phases[static_cast<std::size_t>(x.phase)];
    if (ph.kind != workload::PhaseKind::kCompute) continue;
    flops += ph.flops;
    ns += static_cast<double>(x.end_ns - x.begin_ns);
  }
  m.compute_tflops = ns > 0 ? flops / ns * 1e-3 : 0;
  add_telemetry(m, device_.trace(), r.begin_ns, r.end_ns);
  return m;
}

}  // namespace powershape::bench
