#include "powershape/sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "powershape/sim/fan.hpp"
#include "powershape/sim/governor.hpp"
#include "powershape/sim/power_model.hpp"
#include "powershape/sim/sensor.hpp"
#include "powershape/sim/thermal.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::sim {
using workload::PhaseKind;

namespace {

struct Activity {
  double sm;
  double mem;
};

// What a phase costs on the profile's device, worked out once a run: the parts of its time at a
// clock f: compute cycles (cycles / f), memory seconds at the maximum clock (more as memory slows
// with the clock), the launch (an idle phase: its own seconds); and its activities.
struct PhaseCost {
  double seconds = 0;     // an idle phase's
  double cycles = 0;      // compute: FLOPs / (FLOPs a cycle x efficiency)
  double mem_s = 0;       // bytes / (bandwidth x the kernel's efficiency), at the maximum clock
                          // (of a product: its operands')
  double epilogue_s = 0;  // a product's result traffic left exposed, at the maximum clock
  double raw_mem_s = 0;   // bytes / bandwidth: what its memory activity is measured against
  double launch_s = 0;
  double efficiency = 1;  // a product's, with its partial wave
  bool idle = false;
  Activity act{0, 0};  // at the maximum clock
};

// What a clock does to every phase's time, worked out once a step (the hot loop then multiplies):
// memory time grows as memory slows with the clock; a cycle lasts 1 / f.
struct ClockScale {
  ClockScale(const Profile& p, double mhz)
      : mem(1 / (1 - p.mem_clock_sensitivity + p.mem_clock_sensitivity * mhz / p.max_mhz)),
        cycle_s(1 / (mhz * 1e6)) {}
  double mem, cycle_s;
};

// Seconds a phase takes at a clock (idle: its own seconds).
double seconds_at(const PhaseCost& c, const ClockScale& f) {
  if (c.idle) return c.seconds;
  const double tm = c.mem_s * f.mem;
  if (c.cycles <= 0) return tm + c.launch_s;
  return std::max(c.cycles * f.cycle_s, tm) + c.epilogue_s * f.mem + c.launch_s;
}

double seconds_at(const Profile& p, const PhaseCost& c, double mhz) {
  return seconds_at(c, ClockScale(p, mhz));
}

PhaseCost cost_of(const Profile& p, const workload::Phase& ph) {
  PhaseCost c;
  const double bw = p.mem_bandwidth_gbs * 1e9;
  switch (ph.kind) {
    case PhaseKind::kIdle:
      c.idle = true;
      c.seconds = ph.seconds;
      c.act = {p.idle_activity, 0};
      return c;
    case PhaseKind::kCompute: {
      c.efficiency = ph.efficiency;
      if (ph.m > 0) {
        const double m = static_cast<double>(ph.m), n = static_cast<double>(ph.n),
                     k = static_cast<double>(ph.k);
        // Fewer tiles than the device's multiprocessors leave some idle; a partial last wave too,
        // slower and no busier for it.
        c.efficiency *= workload::product_fill(m, n, k, p.sms);
        if (p.wave_quantization > 0)
          c.efficiency *=
              1 - p.wave_quantization * (1 - workload::product_wave_share(m, n, k, p.sms));
      }
      c.cycles = ph.flops / (p.flops_per_cycle * c.efficiency);
      const double again = reread_bytes(p, ph);
      c.mem_s = (ph.bytes - ph.result_bytes + again) / bw;
      c.raw_mem_s = (ph.bytes + again) / bw;
      if (ph.k > 0)
        c.epilogue_s = ph.result_bytes / (bw * p.epilogue_efficiency) *
                       std::min(1.0, p.epilogue_k / static_cast<double>(ph.k));
      break;
    }
    case PhaseKind::kMemory: {
      const double bytes = memory_bytes(p, ph);
      // A recorded phase's work already came at its kernel's own pace.
      c.mem_s = bytes / (bw * (ph.launched ? p.memory_efficiency_of(ph.name) : 1));
      c.raw_mem_s = bytes / bw;
      break;
    }
  }
  c.launch_s = ph.launched ? p.kernel_launch_us * 1e-6 : 0;
  const double t = seconds_at(p, c, p.max_mhz);
  // The share of the device's peak arithmetic and bandwidth the phase uses while it runs.
  const double mem = t > 0 ? c.raw_mem_s / t : 0;
  if (ph.kind == PhaseKind::kCompute) {
    c.act = {t > 0 ? c.efficiency * c.cycles / (p.max_mhz * 1e6) / t : 0, mem};
  } else if (ph.launched && p.issue_activity > 0) {
    const double e = p.memory_efficiency_of(ph.name);
    c.act = {e * p.memory_phase_activity + (1 - e) * p.issue_activity, mem};
  } else {
    c.act = {p.memory_phase_activity, mem};
  }
  return c;
}

std::vector<PhaseCost> costs_of(const Profile& p, const workload::Plan& plan) {
  std::vector<PhaseCost> out;
  out.reserve(plan.phases.size());
  for (const auto& ph : plan.phases) out.push_back(cost_of(p, ph));
  return out;
}

}  // namespace

struct SimDevice::State {
  State(Profile prof, const DeviceOptions& o)
      : p(std::move(prof)),
        opt(o),
        power(p),
        thermal(p),
        governor(p, o.step_s, o.power_limit_w, o.clock_cap_mhz),
        sensor(p, o.step_s, o.seed, o.sensor_noise, o.expected_s),
        step_ns(static_cast<int64_t>(std::llround(o.step_s * 1e9))),
        inv_step(1 / o.step_s) {
    if (p.fan_tau_s > 0) {
      fan.emplace(p, p.ambient_c);
      thermal.set_r_sink_c_per_w(fan->r_sink_c_per_w());
    }
  }

  // One step with a plan's phase costs (null: idle) at its cursor (a phase, and the share of it
  // still to run); returns the energy it drew.
  template <class OnPhaseEnd>
  double step(const std::vector<PhaseCost>* costs, std::size_t& phase, double& left,
              OnPhaseEnd&& on_end, double* mhz_out) {
    const int64_t t_next = t + step_ns;
    const Activity act = costs != nullptr ? (*costs)[phase].act : Activity{p.idle_activity, 0};
    const double temp = thermal.die_c();
    const double mhz = std::min(governor.target_mhz(), fast_limit_clock(act, temp));
    const double base_w = power.base_w(temp);
    double energy_j = base_w * opt.step_s, remaining = opt.step_s;
    double busy_s = 0, mem_busy_s = 0;  // what NVML's utilisation rates count
    bool working = costs != nullptr;
    const ClockScale scale(p, mhz);
    while (working && remaining > 0) {
      const PhaseCost& ph = (*costs)[phase];
      const Activity& a = ph.act;
      const double secs = seconds_at(ph, scale);
      const double watts = power.power_above_base_w(mhz, a.sm, a.mem);
      const double used = std::min(remaining, left * secs);
      energy_j += watts * used;
      if (!ph.idle) busy_s += used;
      mem_busy_s += std::min(1.0, a.mem) * used;
      if (used == remaining) {  // the phase outlasts the step
        left = std::max(0.0, left - remaining / secs);
        remaining = 0;
        break;
      }
      remaining -= used;
      const int64_t at = t_next - static_cast<int64_t>(remaining * 1e9);
      working = on_end(at, mhz);  // moves the cursor, resets `left`; false when the run is over
    }
    if (remaining > 0) energy_j += power.power_above_base_w(mhz, p.idle_activity, 0) * remaining;
    const double watts = energy_j * inv_step;
    if (fan) {
      fan->step(temp, opt.step_s);
      thermal.set_r_sink_c_per_w(fan->r_sink_c_per_w());
    }
    thermal.step(watts, opt.step_s);
    const double die = thermal.die_c();
    governor.observe(watts, die, mhz);
    if (sensor.step(t_next, watts, busy_s * inv_step, mem_busy_s * inv_step))
      // NVML's clock shows the slow loop's cap, not the fast limiter under it: on an H200 it reads
      // 1980 MHz through 10 ms bursts that the on-GPU probe sees at ~1700.
      sensor.report(t_next, governor.target_mhz(), die,
                    p.reports_power_cap ? governor.reasons()
                                        : governor.reasons() & ~telemetry::reason::kSwPowerCap,
                    fan ? fan->pct() : -1);
    t = t_next;
    ++steps;
    if (mhz_out != nullptr) *mhz_out = mhz;
    return energy_j;
  }

  // The fast limiter's clock for an activity, recomputed only when the activity changes or the
  // die moves by 0.1 C (the leakage that temperature adds changes the answer by far less).
  double fast_limit_clock(const Activity& a, double temp_c) {
    const double temp_q = std::floor(temp_c * 10);
    if (a.sm != cached_sm || a.mem != cached_mem || temp_q != cached_temp_q) {
      cached_sm = a.sm;
      cached_mem = a.mem;
      cached_temp_q = temp_q;
      cached_mhz = power.max_clock_under(p.fast_limit_w, a.sm, a.mem, temp_c);
    }
    return cached_mhz;
  }

  Profile p;
  DeviceOptions opt;
  PowerModel power;
  Thermal thermal;
  Governor governor;
  Sensor sensor;
  std::optional<Fan> fan;  // where the profile has one
  int64_t step_ns;
  double inv_step;
  int64_t t = 0;
  int64_t steps = 0;
  double cached_sm = -1, cached_mem = -1, cached_temp_q = -1e9, cached_mhz = 0;
};

void check_settings(const Profile& p, const DeviceOptions& o) {
  if (!(o.step_s > 0 && o.step_s <= 0.01)) throw invalid_input("step-ms", "expected 0 < ms <= 10");
  // A user's setting within what the device could be asked for (a limit above its own is
  // simulated as asked, up to twice it: what a faster card's limit would be).
  if (o.power_limit_w > 0 && (o.power_limit_w < p.idle_w || o.power_limit_w > 2 * p.power_limit_w))
    throw invalid_input("power-limit",
                        p.name + " takes limits from its idle " +
                            std::to_string(std::lround(p.idle_w)) + " W to twice its " +
                            std::to_string(std::lround(p.power_limit_w)) + " W limit");
  if (o.clock_cap_mhz > 0 && (o.clock_cap_mhz < p.min_mhz || o.clock_cap_mhz > p.max_mhz))
    throw invalid_input("clock-cap", p.name + " runs between " +
                                         std::to_string(std::lround(p.min_mhz)) + " and " +
                                         std::to_string(std::lround(p.max_mhz)) + " MHz");
}

namespace {

// check_run on the plan's costs, which a run goes on to use.
double check_run_of(const Profile& p, const workload::Plan& plan,
                    const std::vector<PhaseCost>& costs, int iterations, double seconds,
                    double step_s) {
  if (plan.phases.empty()) throw invalid_input("the plan has no phases");
  if (iterations <= 0 && !(seconds > 0))
    throw invalid_input("give a number of iterations or a duration");
  // Iterations at the unthrottled rates, times the phases.
  double nominal_s = 0;
  for (const auto& c : costs) nominal_s += seconds_at(p, c, p.max_mhz);
  // Bounded before it starts: one iteration within a simulated day, and at most 5e7 phase
  // ends (a record each; a plan of nanosecond phases run for seconds would make billions).
  if (!(nominal_s <= 86400)) {
    throw invalid_input("one iteration of '" + plan.name + "' lasts " + std::to_string(nominal_s) +
                        " s at the device's peak rates, more than a simulated day");
  }
  if (iterations > 0 && !(iterations * nominal_s <= 86400)) {
    throw invalid_input("iterations", std::to_string(iterations) + " iterations of '" + plan.name +
                                          "' are more than a simulated day; ask for fewer");
  }
  const double iters = iterations > 0 ? iterations : seconds / std::max(nominal_s, 1e-9) * 1.05 + 1;
  const double ends = iters * static_cast<double>(plan.phases.size());
  if (ends > 5e7) {
    throw invalid_input(
        "'" + plan.name + "' would end about " + std::to_string(std::llround(ends)) +
        " phases in this run (at most 50000000): its phases are too short for so many iterations "
        "or seconds");
  }
  const double steps = (iterations > 0 ? iterations * nominal_s : seconds) / step_s;
  if (steps > 2e9) {  // ~a minute or two of CPU
    throw invalid_input("step-ms", "this run would take about " +
                                       std::to_string(std::llround(steps)) +
                                       " simulation steps (at most 2000000000): a coarser step "
                                       "or a shorter run");
  }
  return ends;
}

}  // namespace

double check_run(const Profile& p, const workload::Plan& plan, int iterations, double seconds,
                 double step_s) {
  return check_run_of(p, plan, costs_of(p, plan), iterations, seconds, step_s);
}

SimDevice::SimDevice(Profile p, const DeviceOptions& o) {
  check_settings(p, o);
  s_ = std::make_unique<State>(std::move(p), o);
  const Profile& q = s_->p;
  if (o.start_temp_c > q.ambient_c) {
    // Settle the network at the power that holds the start temperature.
    const double w = (o.start_temp_c - q.ambient_c) / (q.r_die_c_per_w + q.r_sink_c_per_w);
    for (int i = 0; i < 200; ++i) s_->thermal.step(w, std::max(q.tau_die_s, q.tau_sink_s) / 20);
  }
}

SimDevice::~SimDevice() = default;

void SimDevice::idle(double seconds) {
  const int64_t end = s_->t + static_cast<int64_t>(seconds * 1e9);
  std::size_t phase = 0;
  double left = 0;
  auto never = [](int64_t, double) { return false; };
  while (s_->t < end) s_->step(nullptr, phase, left, never, nullptr);
}

RunRecord SimDevice::run(const workload::Plan& plan, int iterations, double seconds) {
  const std::vector<PhaseCost> costs = costs_of(s_->p, plan);
  RunRecord r;
  r.begin_ns = s_->t;
  r.ends_ns.reserve(static_cast<std::size_t>(check_run_of(
      s_->p, plan, costs, iterations, seconds, static_cast<double>(s_->step_ns) * 1e-9)));
  std::size_t phase = 0;
  double left = 1;
  int64_t phase_begin = r.begin_ns;
  bool done = false;
  // Each phase's clock, time-weighted: mhz x ns summed up to `counted`.
  r.clocks.resize(plan.phases.size());
  double phase_clock = 0;
  int64_t counted = r.begin_ns;
  auto on_end = [&](int64_t at, double mhz) {
    phase_clock += mhz * static_cast<double>(at - counted);
    counted = at;
    r.ends_ns.push_back(at);
    r.clocks[phase].ns += static_cast<double>(at - phase_begin);
    r.clocks[phase].mhz += phase_clock;  // a sum of mhz x ns until the run ends
    phase_clock = 0;
    phase_begin = at;
    if (++phase == plan.phases.size()) {
      phase = 0;
      ++r.iterations;
      const double ran_s = static_cast<double>(at - r.begin_ns) * 1e-9;
      if ((iterations > 0 && r.iterations >= iterations) || (iterations <= 0 && ran_s >= seconds)) {
        done = true;
        r.end_ns = at;
      }
    }
    left = 1;
    return !done;
  };
  double clock_time = 0;
  while (!done) {
    double mhz = 0;
    r.energy_j += s_->step(&costs, phase, left, on_end, &mhz);
    if (!std::isfinite(r.energy_j) || !std::isfinite(s_->thermal.die_c())) {
      throw invalid_input("simulation: the device's power or temperature became non-finite at " +
                          std::to_string(static_cast<double>(s_->t) * 1e-9) +
                          " s (a profile whose figures no real device has?)");
    }
    clock_time += mhz;
    phase_clock += mhz * static_cast<double>(s_->t - counted);
    counted = s_->t;
  }
  const double steps = static_cast<double>(s_->t - r.begin_ns) / static_cast<double>(s_->step_ns);
  r.mean_clock_mhz = clock_time / std::max(1.0, steps);
  for (auto& c : r.clocks) c.mhz = c.ns > 0 ? c.mhz / c.ns : 0;
  return r;
}

void SimDevice::set_power_limit_w(double w) {
  if (!(w >= s_->p.power_limit_w * 0.1 && w <= s_->p.fast_limit_w))
    throw invalid_input("power limit outside 10% of the profile's limit to its fast limit");
  s_->governor.set_power_limit_w(w);
}

void SimDevice::set_ambient_c(double c) {
  if (!(c >= -20 && c <= 60)) throw invalid_input("ambient outside -20..60 C");
  s_->thermal.set_ambient_c(c);
}

int64_t SimDevice::now_ns() const { return s_->t; }
double SimDevice::die_c() const { return s_->thermal.die_c(); }
const Profile& SimDevice::profile() const { return s_->p; }

trace::Trace SimDevice::trace() const {
  const Profile& p = s_->p;
  trace::Trace t;
  t.source = "sim:" + p.name;
  telemetry::DeviceInfo d;
  d.name = "simulated " + p.name + " (" + p.status + ")";
  d.power_limit_mw = telemetry::Reading::of(std::llround(s_->governor.power_limit_w() * 1e3));
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
                 telemetry::Signal::kEnergy, telemetry::Signal::kSmClock,
                 telemetry::Signal::kGpuTemp, telemetry::Signal::kReasons}) {
    d.support[static_cast<std::size_t>(s)] = telemetry::Status::kOk;
  }
  if (p.fan_tau_s > 0)
    d.support[static_cast<std::size_t>(telemetry::Signal::kFanSpeed)] = telemetry::Status::kOk;
  if (!p.reports_power_cap) {  // NVML says "N/A" for the limit, as on a DGX Spark
    d.power_limit_mw = d.enforced_power_limit_mw =
        telemetry::Reading::failed(telemetry::Status::kNotSupported);
  }
  t.devices.push_back(d);
  t.samples = s_->sensor.rows();
  return t;
}

double memory_bytes(const Profile& p, const workload::Phase& ph) {
  return ph.bytes + (p.l2_row_bytes > 0 && ph.row_bytes > p.l2_row_bytes ? ph.reread_bytes : 0);
}

double reread_bytes(const Profile& p, const workload::Phase& ph) {
  if (!(p.reread_flops > 0) || ph.kind != PhaseKind::kCompute || ph.m <= 0) return 0;
  const double m = static_cast<double>(ph.m), n = static_cast<double>(ph.n),
               k = static_cast<double>(ph.k);
  const double a = 2 * m * k, b = 2 * k * n;  // bf16 operands
  const double s = std::min(a, b), other = a <= b ? n : m;
  const double times = ph.flops / p.reread_flops;
  return s * (p.reread_span > 0 ? std::min(times, other / p.reread_span) : times);
}

double phase_seconds(const Profile& p, const workload::Phase& ph, double mhz) {
  return seconds_at(p, cost_of(p, ph), mhz);
}

SimResult simulate(const Profile& p, const workload::Plan& plan, const SimOptions& o) {
  if (o.iterations <= 0 && !(o.seconds > 0))
    throw invalid_input("give a number of iterations or a duration");
  DeviceOptions d = o;
  d.expected_s = o.lead_in_s + o.seconds + o.tail_s;
  SimDevice dev(p, d);
  dev.idle(o.lead_in_s);
  SimResult r;
  r.run = dev.run(plan, o.iterations, o.seconds);
  dev.idle(o.tail_s);
  r.trace = dev.trace();
  r.trace.regions.push_back({"workload", -1, r.run.begin_ns, r.run.end_ns});
  r.end_temp_c = dev.die_c();
  r.steps = dev.now_ns() / static_cast<int64_t>(std::llround(o.step_s * 1e9));
  return r;
}

}  // namespace powershape::sim
