// `powershape sim fleet`: a data-parallel job of N simulated GPUs, its power as the grid sees it.
#include <algorithm>
#include <cstdio>
#include <string>

#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/swing.hpp"
#include "powershape/analysis/swing_print.hpp"
#include "powershape/sim/fleet.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_lock.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct FleetArgs {
  std::string profile = "h200";
  workload::WorkloadArgs workload;
  sim::FleetOptions fleet;
  int iterations = 1;
  double grad_gb = 1.0, bus_gb_per_s = 45, hop_us = 5, allreduce_ms = -1, comm_share = 0.1;
  std::string spec = analysis::kDefaultGridSpec, out, json;
};

int run_fleet(FleetArgs& a) {
  const auto claimed = util::claim_outputs({{a.out, "-o"}, {a.json, "--json"}}, {a.spec});
  const analysis::GridSpec spec = analysis::load_grid_spec(a.spec);
  const sim::Profile p = sim::load_profile(a.profile);
  auto plans = sim::workload_plans(a.workload, {p.peak_flops_per_s(), p.peak_bytes_per_s()});
  if (plans.size() != 1)
    throw invalid_input("--chunks: a fleet runs one chunk count (repro compares several)");
  const double dt = std::min(1e-3, a.fleet.resolution_s);
  const sim::RankStep rank = sim::rank_step(p, plans.front(), a.iterations, 2.0, dt, a.comm_share);
  a.fleet.allreduce_s = a.allreduce_ms >= 0 ? a.allreduce_ms * 1e-3
                                            : sim::allreduce_seconds(a.grad_gb * 1e9, a.fleet.gpus,
                                                                     a.bus_gb_per_s, a.hop_us);
  const sim::Fleet f = sim::simulate_fleet(rank, a.fleet);
  sim::print_fleet(stdout, f, a.fleet, rank, p, plans.front().name, a.iterations);
  analysis::SwingOptions o;
  o.ramp_window_s = spec.ramp_window_s;
  o.range_window_s = spec.range_window_s;
  o.rated_w = p.power_limit_w * static_cast<double>(a.fleet.gpus);
  const analysis::Swing s = analysis::analyse_swing(f.power, spec, o);
  analysis::print_swing(stdout, s, spec);
  if (!a.out.empty()) analysis::write_power_csv(a.out, f.power);
  if (!a.json.empty()) {
    auto j = analysis::to_json(s);
    j.update(sim::to_json(f, a.fleet));
    j["spec"] = {{"name", spec.name}, {"source", spec.source}};
    util::write_json_file(a.json, j);
  }
  return 0;
}

}  // namespace

CLI::App* add_sim_fleet(CLI::App& sim) {
  auto* cmd = sim.add_subcommand(
      "fleet",
      "A data-parallel job of N simulated GPUs (compute, all-reduce, checkpoints, jitter and "
      "stragglers): its power in W and its swings against a grid spec");
  static FleetArgs a;
  cmd->add_option("--profile", a.profile, "Device profile of each GPU (default h200)");
  add_workload_options(*cmd, a.workload, WorkloadUse::kSim);
  cmd->add_option("--gpus", a.fleet.gpus, "GPUs in the job (default 1024)")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  cmd->add_option("--seconds", a.fleet.seconds, "Simulated seconds of training (default 60)")
      ->check(finite_in(0.01, 86400));
  cmd->add_option("--resolution", a.fleet.resolution_s,
                  "Seconds between the fleet's power samples (default 0.01)")
      ->check(finite_in(1e-3, 1));
  cmd->add_option("--iterations", a.iterations,
                  "The workload's iterations a step (gradient accumulation; default 1)")
      ->check(CLI::Range(1, 10'000));
  cmd->add_option("--grad-gb", a.grad_gb,
                  "The gradient all-reduced each step, GB (default 1.0: Qwen2-0.5B in bf16)")
      ->check(finite_in(0, 1e4));
  cmd->add_option("--bus-gbps", a.bus_gb_per_s,
                  "The all-reduce's bus bandwidth a GPU, GB/s (default 45: 400 Gb/s InfiniBand)")
      ->check(finite_in(0.1, 1e5));
  cmd->add_option("--allreduce-ms", a.allreduce_ms,
                  "The exposed all-reduce's time instead of the ring model's")
      ->check(finite_in(0, 3.6e6));
  cmd->add_option("--comm-power", a.comm_share,
                  "Power at a collective between idle (0) and the limit (1); default 0.1")
      ->check(finite_in(0, 1));
  cmd->add_option("--jitter", a.fleet.jitter,
                  "A rank's compute time's relative standard deviation (default 0.01)")
      ->check(finite_in(0, 0.3));
  cmd->add_option("--stragglers", a.fleet.straggler_share,
                  "The share of ranks slow in a step (default 0)")
      ->check(finite_in(0, 1));
  cmd->add_option("--straggler-slowdown", a.fleet.straggler_slowdown,
                  "How much slower a straggler is (0.2: 20%)")
      ->check(finite_in(0, 10));
  cmd->add_option("--checkpoint-every", a.fleet.checkpoint_every,
                  "Steps between checkpoints (default 0: none)")
      ->check(CLI::Range(0, 100'000'000));
  cmd->add_option("--checkpoint-s", a.fleet.checkpoint_s, "A checkpoint's pause (seconds)")
      ->check(finite_in(0, 3600));
  cmd->add_option("--seed", a.fleet.seed, "Seed of the jitter (default 1)")->check(seed_value());
  cmd->add_option("--spec", a.spec, "A grid spec: a JSON file or a shipped name");
  output(cmd->add_option("-o,--output", a.out, "Write the fleet's power as CSV (t_s,power_w)"));
  output(cmd->add_option("--json", a.json,
                         "Write the figures, the spectrum and the verdicts as JSON"));
  cmd->callback([] { exit_code() = run_fleet(a); });
  return cmd;
}

}  // namespace powershape::cli
