#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "powershape/sim/profile.hpp"
#include "powershape/trace/trace.hpp"
#include "powershape/workload/plan.hpp"

namespace powershape::sim {

struct DeviceOptions {
  double step_s = 1e-4;      // simulation step
  double power_limit_w = 0;  // a user's power limit; 0: the profile's
  double clock_cap_mhz = 0;  // a user's clock cap; 0: none
  uint64_t seed = 1;
  double sensor_noise = 0.005;  // relative, on power readings
  double start_temp_c = 0;      // die temperature at the start; 0: ambient
  double expected_s = 0;        // how long the device will run, if known (sizes buffers once)
};

struct PhaseRecord {
  int iteration;
  int phase;  // index into the plan
  int64_t begin_ns, end_ns;
};

// The time a run spent in one phase of the plan (all its iterations) and the real SM clock's
// mean over it.
struct PhaseClock {
  double ns = 0;
  double mhz = 0;
};

// What one run of a plan did. The simulator's hot path writes one number a phase end (a 32-chunk
// LM head at 1 ms steps ends millions): when it ended; the rest follows from the order.
struct RunRecord {
  std::vector<int64_t> ends_ns;    // iteration i's phase j at i x (the plan's phases) + j
  std::vector<PhaseClock> clocks;  // one per plan phase
  int iterations = 0;
  int64_t begin_ns = 0, end_ns = 0;
  double energy_j = 0;        // the model's own energy (not the sensor's)
  double mean_clock_mhz = 0;  // time-weighted real clock
  // The i-th phase that ended: which, in which iteration, from when (the one before's end).
  PhaseRecord phase(std::size_t i) const {
    const std::size_t n = clocks.size();
    return {static_cast<int>(i / n), static_cast<int>(i % n), i > 0 ? ends_ns[i - 1] : begin_ns,
            ends_ns[i]};
  }
};

// What a SimDevice refuses, checked without one: a user's power limit outside the profile's idle
// to twice its limit, a clock cap outside its range ("power-limit", "clock-cap"), a step outside
// (0, 10 ms] ("step-ms").
void check_settings(const Profile& p, const DeviceOptions& o);
// What a run is bounded by, checked before it starts: one iteration within a simulated day, all
// of them too ("iterations"), at most 5e7 phase ends and 2e9 steps of `step_s` ("step-ms").
// Returns the phase ends the run will record, about.
double check_run(const Profile& p, const workload::Plan& plan, int iterations, double seconds,
                 double step_s);

// A simulated GPU whose state (temperature, governor caps, clocks) carries over from one run to
// the next, as a real one's does. Deterministic for a given seed.
class SimDevice {
 public:
  SimDevice(Profile p, const DeviceOptions& o);
  ~SimDevice();
  SimDevice(const SimDevice&) = delete;
  SimDevice& operator=(const SimDevice&) = delete;
  void idle(double seconds);
  // Runs the plan `iterations` times, or (iterations 0) until `seconds` of it have passed,
  // finishing the iteration in progress. Throws std::invalid_argument on an empty plan or when
  // neither is set.
  RunRecord run(const workload::Plan& plan, int iterations, double seconds);
  int64_t now_ns() const;
  double die_c() const;
  const Profile& profile() const;
  // Conditions that change under a running workload: the power limit (the governor's slow loop;
  // the fast limiter stays the profile's), and the ambient temperature. Throw
  // std::invalid_argument outside the profile's limits / a plausible -20..60 C.
  void set_power_limit_w(double w);
  void set_ambient_c(double c);
  // What NVML would have shown so far, with the device's description.
  trace::Trace trace() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

struct SimOptions : DeviceOptions {
  double lead_in_s = 0.5;  // idle before the workload
  double tail_s = 0.5;     // idle after it
  int iterations = 0;      // run the plan this many times ...
  double seconds = 0;      // ... or for this long
};

struct SimResult {
  trace::Trace trace;  // with a "workload" region
  RunRecord run;
  double end_temp_c = 0;
  int64_t steps = 0;
};

// The seconds one phase takes on the profile's device held at `mhz` (the simulator's kernel
// model: compute, memory and launch, as the run's steps use them).
double phase_seconds(const Profile& p, const workload::Phase& ph, double mhz);
// The bytes a memory phase moves through the device's memory: its own, and the rows it reads
// again where they are too long to stay in L2 (Profile::l2_row_bytes).
double memory_bytes(const Profile& p, const workload::Phase& ph);
// The bytes a product reads from memory beyond its operands once each: its smaller operand read
// again as L2 loses it (Profile::reread_flops, reread_span); 0 for any other phase.
double reread_bytes(const Profile& p, const workload::Phase& ph);

// Idles, runs the plan once as `o` says, idles again.
SimResult simulate(const Profile& p, const workload::Plan& plan, const SimOptions& o);

}  // namespace powershape::sim
