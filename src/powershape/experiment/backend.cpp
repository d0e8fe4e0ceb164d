#include "powershape/experiment/backend.hpp"

#include <chrono>

#include "powershape/analysis/summary.hpp"
#include "powershape/util/error.hpp"

namespace powershape::experiment {

nlohmann::json to_json(const Measurement& m) {
  return {{"config", m.config},
          {"round", m.round},
          {"seconds", m.seconds},
          {"iterations", m.iterations},
          {"ms_per_iteration", m.ms_per_iteration},
          {"compute_tflops", m.compute_tflops},
          {"energy_j", m.energy_j},
          {"j_per_iteration", m.j_per_iteration()},
          {"energy_updates", m.energy_updates},
          {"avg_power_w", m.avg_power_w},
          {"sm_clock_mhz", m.sm_clock_mhz},
          {"power_capped", m.power_capped},
          {"thermal_throttled", m.thermal_throttled},
          {"peak_temp_c", m.peak_temp_c},
          {"extra_gib", m.extra_gib}};
}

telemetry::SamplerOptions measurement_sampler_options() {
  telemetry::SamplerOptions o;
  o.slow_period = std::chrono::milliseconds(100);
  o.slow_share = 2;  // the energy counter every 100 ms, whatever it costs: windows of a second
  o.stretch = 1;     // and every signal every period: a run's end is read within one
  return o;
}

std::vector<workload::KernelTime> Backend::time_kernels(std::size_t, int) {
  throw unsupported(describe() + " runs no kernels of its own to time");
}

std::vector<std::pair<double, double>> Backend::probe_clock_step(std::size_t, double, double) {
  return {};
}

void add_telemetry(Measurement& m, const trace::Trace& t, int64_t begin_ns, int64_t end_ns) {
  auto s = analysis::summarize(t, 0, "window", begin_ns, end_ns);
  m.energy_j = s.energy.energy_mj * 1e-3;
  m.energy_updates = s.energy.counter_updates;
  m.avg_power_w = s.avg_power_w.value_or(0);
  m.sm_clock_mhz = s.sm_clock_mhz.mean;
  m.power_capped = s.power_capped_fraction().value_or(0);
  m.thermal_throttled = s.thermal_fraction().value_or(0);
  m.peak_temp_c = static_cast<double>(s.peak_temp_c.value_or(0));
}

}  // namespace powershape::experiment
