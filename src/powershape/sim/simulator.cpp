#include "powershape/sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "powershape/sim/governor.hpp"
#include "powershape/sim/power_model.hpp"
#include "powershape/sim/sensor.hpp"
#include "powershape/sim/thermal.hpp"

namespace powershape::sim {
using workload::PhaseKind;

namespace {

struct Activity {
  double sm;
  double mem;
};

Activity activity_of(const Profile& p, const workload::Phase* ph) {
  if (ph == nullptr || ph->kind == PhaseKind::kIdle) return {p.idle_activity, 0};
  if (ph->kind == PhaseKind::kMemory) return {p.memory_phase_activity, 1};
  return {ph->efficiency, 0.1};
}

// Work a phase has, in its own unit, and the rate it goes at at a clock (unit per second).
double work_of(const workload::Phase& ph) {
  switch (ph.kind) {
    case PhaseKind::kCompute: return ph.flops;
    case PhaseKind::kMemory: return ph.bytes;
    case PhaseKind::kIdle: return ph.seconds;
  }
  return 0;
}

double rate_of(const Profile& p, const workload::Phase& ph, double mhz) {
  switch (ph.kind) {
    case PhaseKind::kCompute: return p.flops_per_cycle * mhz * 1e6 * ph.efficiency;
    case PhaseKind::kMemory:
      return p.mem_bandwidth_gbs * 1e9 *
             (1 - p.mem_clock_sensitivity + p.mem_clock_sensitivity * mhz / p.max_mhz);
    case PhaseKind::kIdle: return 1;
  }
  return 1;
}

}  // namespace

SimResult simulate(const Profile& p, const workload::Plan& plan, const SimOptions& o) {
  if (!(o.step_s > 0)) throw std::invalid_argument("the simulation step must be positive");
  if (o.iterations <= 0 && !(o.seconds > 0)) {
    throw std::invalid_argument("give a number of iterations or a duration");
  }
  if (plan.phases.empty()) throw std::invalid_argument("the plan has no phases");
  SimResult r;
  PowerModel power(p);
  Thermal thermal(p);
  Governor governor(p, o.step_s, o.power_limit_w, o.clock_cap_mhz);
  Sensor sensor(p, o.step_s, o.seed, o.sensor_noise, o.lead_in_s + o.seconds + o.tail_s);
  if (o.start_temp_c > p.ambient_c) {
    // Warm the die to the start temperature (sink in step) before time zero.
    double w = (o.start_temp_c - p.ambient_c) / (p.r_die_c_per_w + p.r_sink_c_per_w);
    for (int i = 0; i < 200; ++i) thermal.step(w, std::max(p.tau_die_s, p.tau_sink_s) / 20);
  }

  const auto step_ns = static_cast<int64_t>(std::llround(o.step_s * 1e9));
  const int64_t lead_ns = static_cast<int64_t>(o.lead_in_s * 1e9);
  const int64_t tail_ns = static_cast<int64_t>(o.tail_s * 1e9);
  int64_t t = 0;
  int iteration = 0;
  std::size_t phase = 0;
  double left = work_of(plan.phases[0]);
  int64_t phase_begin = lead_ns;
  bool working = false, done = false;
  int64_t end_ns = -1;  // when the run stops (workload end + tail)
  double clock_time_sum = 0, busy_s = 0;

  while (end_ns < 0 || t < end_ns) {
    const int64_t t_next = t + step_ns;
    if (!working && !done && t >= lead_ns) {
      working = true;
      r.workload_begin_ns = t;
      phase_begin = t;
    }
    const workload::Phase* current = working ? &plan.phases[phase] : nullptr;
    const Activity act = activity_of(p, current);
    const double temp = thermal.die_c();
    const double fast = power.max_clock_under(p.fast_limit_w, act.sm, act.mem, temp);
    const double mhz = std::min(governor.target_mhz(), fast);

    // Advance the work through the step; phases may begin and end inside it.
    double energy_j = 0, remaining = o.step_s;
    while (working && remaining > 0) {
      const workload::Phase& ph = plan.phases[phase];
      const Activity a = activity_of(p, &ph);
      const double rate = rate_of(p, ph, mhz);
      const double need = left / rate;
      const double used = std::min(need, remaining);
      energy_j += power.power_w(mhz, a.sm, a.mem, temp) * used;
      remaining -= used;
      left -= used * rate;
      if (need <= used + 1e-15) {
        const int64_t at = t_next - static_cast<int64_t>(remaining * 1e9);
        r.phases.push_back({iteration, static_cast<int>(phase), phase_begin, at});
        phase_begin = at;
        if (++phase == plan.phases.size()) {
          phase = 0;
          ++iteration;
          const double ran_s = static_cast<double>(at - r.workload_begin_ns) * 1e-9;
          if ((o.iterations > 0 && iteration >= o.iterations) || (o.seconds > 0 && ran_s >= o.seconds)) {
            working = false;
            done = true;
            r.workload_end_ns = at;
            end_ns = at + tail_ns;
          }
        }
        left = work_of(plan.phases[phase]);
      }
    }
    if (remaining > 0) energy_j += power.power_w(mhz, p.idle_activity, 0, temp) * remaining;
    const double watts = energy_j / o.step_s;
    if (working || (done && t < r.workload_end_ns)) {
      r.workload_energy_j += energy_j;
      clock_time_sum += mhz * o.step_s;
      busy_s += o.step_s;
    }
    thermal.step(watts, o.step_s);
    governor.observe(watts, thermal.die_c());
    sensor.step(t_next, watts, governor.target_mhz(), thermal.die_c(), governor.reasons());
    t = t_next;
    ++r.steps;
  }
  r.mean_clock_mhz = busy_s > 0 ? clock_time_sum / busy_s : 0;
  r.end_temp_c = thermal.die_c();

  r.trace.source = "sim:" + p.name;
  telemetry::DeviceInfo d;
  d.name = "simulated " + p.name + " (" + p.status + ")";
  d.power_limit_mw = telemetry::Reading::of(std::llround(governor.power_limit_w() * 1e3));
  d.enforced_power_limit_mw = d.power_limit_mw;
  d.max_sm_clock_mhz = telemetry::Reading::of(std::llround(p.max_mhz));
  d.temp_gpu_max_c = telemetry::Reading::of(std::llround(p.max_operating_c));
  for (auto* x : {&d.min_power_limit_mw, &d.max_power_limit_mw, &d.max_mem_clock_mhz,
                  &d.temp_slowdown_c, &d.temp_shutdown_c, &d.temp_mem_max_c}) {
    *x = telemetry::Reading::failed(telemetry::Status::kNotSupported);
  }
  d.support.fill(telemetry::Status::kNotSupported);
  for (auto s : {telemetry::Signal::kPowerUsage, telemetry::Signal::kPowerInstant,
                 telemetry::Signal::kPowerAverage, telemetry::Signal::kDriverPower,
                 telemetry::Signal::kEnergy, telemetry::Signal::kSmClock, telemetry::Signal::kGpuTemp,
                 telemetry::Signal::kReasons}) {
    d.support[static_cast<std::size_t>(s)] = telemetry::Status::kOk;
  }
  r.trace.devices.push_back(d);
  r.trace.samples = std::move(sensor.rows());
  r.trace.regions.push_back({"workload", -1, r.workload_begin_ns, r.workload_end_ns});
  return r;
}

}  // namespace powershape::sim
