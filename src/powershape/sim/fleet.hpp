#pragma once
// A data-parallel training job of N synchronised GPUs, as the grid sees it (docs/grid.md). Every
// step each rank computes (one GPU's power through its step, from the device model), waits at the
// all-reduce for the slowest rank, and all of them communicate; every K steps they pause for a
// checkpoint. The fleet's power is aggregated statistically, never by a loop over ranks: a rank's
// compute time is its step's times a random slowness (jitter, and stragglers), so the fleet's
// expected power at each moment is N times the mean over that distribution (a quadrature of it),
// and a step ends when the slowest of N draws does (drawn directly from the maximum's law). The
// cost does not grow with N: 100,000 GPUs for 10 minutes take well under a second.
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "powershape/analysis/power_series.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/workload/plan.hpp"

namespace powershape::sim {

// One GPU's power through one step's compute, sampled every dt_s from the step's start.
struct RankStep {
  double dt_s = 1e-3;
  std::vector<double> compute_w;
  double comm_w = 0;  // while at a collective (waiting for the slowest rank, or all-reducing)
  double idle_w = 0;  // before and after the job, and through a checkpoint's pause
  double seconds() const { return dt_s * static_cast<double>(compute_w.size()); }
};

struct FleetOptions {
  int64_t gpus = 1024;
  double seconds = 60;  // of training, after lead_in_s of idle; a tail of idle follows
  double lead_in_s = 2, tail_s = 2;
  double resolution_s = 0.01;     // of the output: a multiple of the rank's dt_s (rounded)
  double allreduce_s = 0;         // the step's exposed collective
  double jitter = 0.01;           // a rank's compute time's relative standard deviation
  double straggler_share = 0;     // the share of ranks that are slow in a step ...
  double straggler_slowdown = 0;  // ... and by how much (0.2: 20% slower)
  int checkpoint_every = 0;       // steps; 0: none
  double checkpoint_s = 0;
  uint64_t seed = 1;
};

struct Fleet {
  analysis::PowerSeries power;  // the fleet's, W, from the lead-in's start
  int64_t steps = 0;
  double mean_step_s = 0;
  double energy_j = 0;
  double slowest_mean = 0;  // the mean of each step's slowest rank's slowness (1.05: 5% late)
};

// The quantile of a rank's slowness (1 + jitter x z, or a straggler's 1 + slowdown + jitter x z).
double slowness_quantile(const FleetOptions& o, double q);
// The slowest of `gpus` ranks' slowness, drawn with a uniform `u` in (0, 1).
double slowest_of(const FleetOptions& o, double u);

// Throws (invalid input) on options outside their ranges (docs/grid.md lists them) or an empty
// rank step.
Fleet simulate_fleet(const RankStep& r, const FleetOptions& o);

// A ring all-reduce's time for `bytes` over `gpus`: 2 (N - 1) / N x bytes at the bus bandwidth,
// plus a tree's latency, 2 log2(N) hops of `hop_us` (NCCL's own model of its algorithms).
double allreduce_seconds(double bytes, int64_t gpus, double bus_gb_per_s, double hop_us);

// One GPU's steady step of `plan` on the profile's device: warmed for `warm_s`, then `iterations`
// of the plan recorded at `dt_s` (the device model's power, without the sensor's noise).
// `comm_share` places the collective's power between idle (0) and the power limit (1).
RankStep rank_step(const Profile& p, const workload::Plan& plan, int iterations, double warm_s,
                   double dt_s, double comm_share);

// The job as simulated (N x the profile, each step `iterations` x `workload` then the all-reduce,
// the checkpoints) and what it came to: steps, their mean, the slowest rank's lag, the energy.
void print_fleet(std::FILE* out, const Fleet& f, const FleetOptions& o, const RankStep& rank,
                 const Profile& p, const std::string& workload, int iterations);
// The fleet's figures beside its swing's JSON: GPUs, steps, mean step, energy, all-reduce.
nlohmann::json to_json(const Fleet& f, const FleetOptions& o);

}  // namespace powershape::sim
