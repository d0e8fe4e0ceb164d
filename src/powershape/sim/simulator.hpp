#pragma once
#include <cstdint>
#include <vector>

#include "powershape/sim/profile.hpp"
#include "powershape/trace/trace.hpp"
#include "powershape/workload/plan.hpp"

namespace powershape::sim {

struct SimOptions {
  double step_s = 1e-4;       // simulation step
  double lead_in_s = 0.5;     // idle before the workload
  double tail_s = 0.5;        // idle after it
  int iterations = 0;         // run the plan this many times ...
  double seconds = 0;         // ... or until this much workload time has passed (whichever is set)
  double power_limit_w = 0;   // a user's power limit; 0: the profile's
  double clock_cap_mhz = 0;   // a user's clock cap; 0: none
  uint64_t seed = 1;
  double sensor_noise = 0.005;  // relative, on power readings
  double start_temp_c = 0;      // die temperature at the start; 0: ambient
};

struct PhaseRecord {
  int iteration;
  int phase;  // index into the plan
  int64_t begin_ns, end_ns;
};

struct SimResult {
  trace::Trace trace;                // what NVML would have shown, with a "workload" region
  std::vector<PhaseRecord> phases;   // when each phase of each iteration ran
  int64_t workload_begin_ns = 0, workload_end_ns = 0;
  double workload_energy_j = 0;      // the model's own energy over the workload (not the sensor's)
  double mean_clock_mhz = 0;         // time-weighted real clock over the workload
  double end_temp_c = 0;
  int64_t steps = 0;
};

// Runs the plan on the modelled GPU. Deterministic for a given seed. Throws std::invalid_argument
// when neither iterations nor seconds is set, or the step is not positive.
SimResult simulate(const Profile& p, const workload::Plan& plan, const SimOptions& o);

}  // namespace powershape::sim
