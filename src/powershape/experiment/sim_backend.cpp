#include "powershape/experiment/sim_backend.hpp"

namespace powershape::experiment {

SimBackend::SimBackend(const sim::Profile& p, const sim::DeviceOptions& o) : device_(p, o) {}

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

}  // namespace powershape::experiment
