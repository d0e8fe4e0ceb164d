#include "powershape/experiment/sim_backend.hpp"

#include <algorithm>

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
  add_telemetry(m, device_.trace(), r.begin_ns, r.end_ns);
  return m;
}

std::vector<workload::KernelTime> SimBackend::time_kernels(std::size_t i, int iterations) {
  const workload::Plan& plan = configs_.at(i);
  sim::RunRecord r = device_.run(plan, iterations, 0);
  std::vector<std::vector<double>> ms(plan.phases.size());
  for (std::size_t e = 0; e < r.ends_ns.size(); ++e) {
    const sim::PhaseRecord x = r.phase(e);
    ms[static_cast<std::size_t>(x.phase)].push_back(static_cast<double>(x.end_ns - x.begin_ns) *
                                                    1e-6);
  }
  Measurement m;
  add_telemetry(m, device_.trace(), r.begin_ns, r.end_ns);
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
