// `powershape sim fleet`: a data-parallel job of N simulated GPUs, its power as the grid sees it.
#include <cstdio>
#include <string>

#include "powershape/analysis/power_input.hpp"
#include "powershape/sim/fleet_run.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/output_lock.hpp"
#include "subcommands.hpp"
#include "validators.hpp"
#include "workload_options.hpp"

namespace powershape::cli {
namespace {

struct FleetArgs {
  sim::FleetRequest q;
  std::string out, json;
};

int run_fleet(const FleetArgs& a) {
  const auto claimed = util::claim_outputs({{a.out, "-o"}, {a.json, "--json"}}, {a.q.spec});
  const sim::FleetRun r = sim::fleet_run(a.q);
  sim::print_fleet_run(stdout, r);
  if (!a.out.empty()) analysis::write_power_csv(a.out, r.fleet.power);
  if (!a.json.empty()) util::write_json_file(a.json, sim::to_json(r));
  return 0;
}

}  // namespace

CLI::App* add_sim_fleet(CLI::App& sim) {
  auto* cmd = sim.add_subcommand(
      "fleet",
      "A data-parallel job of N simulated GPUs (compute, all-reduce, checkpoints, jitter and "
      "stragglers): its power in W and its swings against a grid spec");
  static FleetArgs a;
  cmd->add_option("--profile", a.q.profile, "Device profile of each GPU (default h200)");
  add_workload_options(*cmd, a.q.workload, WorkloadUse::kSim);
  cmd->add_option("--gpus", a.q.fleet.gpus, "GPUs in the job (default 1024)")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  cmd->add_option("--seconds", a.q.fleet.seconds, "Simulated seconds of training (default 60)")
      ->check(finite_in(0.01, 86400));
  cmd->add_option("--resolution", a.q.fleet.resolution_s,
                  "Seconds between the fleet's power samples (default 0.01)")
      ->check(finite_in(1e-3, 1));
  cmd->add_option("--iterations", a.q.iterations,
                  "The workload's iterations a step (gradient accumulation; default 1)")
      ->check(CLI::Range(1, 10'000));
  cmd->add_option("--grad-gb", a.q.grad_gb,
                  "The gradient all-reduced each step, GB (default 1.0: Qwen2-0.5B in bf16)")
      ->check(finite_in(0, 1e4));
  cmd->add_option("--bus-gbps", a.q.bus_gb_per_s,
                  "The all-reduce's bus bandwidth a GPU, GB/s (default 45: 400 Gb/s InfiniBand)")
      ->check(finite_in(0.1, 1e5));
  cmd->add_option("--allreduce-ms", a.q.allreduce_ms,
                  "The exposed all-reduce's time instead of the ring model's")
      ->check(finite_in(0, 3.6e6));
  cmd->add_option("--comm-power", a.q.comm_share,
                  "Power at a collective between idle (0) and the limit (1); default 0.1")
      ->check(finite_in(0, 1));
  cmd->add_option("--jitter", a.q.fleet.jitter,
                  "A rank's compute time's relative standard deviation (default 0.01)")
      ->check(finite_in(0, 0.3));
  cmd->add_option("--stragglers", a.q.fleet.straggler_share,
                  "The share of ranks slow in a step (default 0)")
      ->check(finite_in(0, 1));
  cmd->add_option("--straggler-slowdown", a.q.fleet.straggler_slowdown,
                  "How much slower a straggler is (0.2: 20%)")
      ->check(finite_in(0, 10));
  cmd->add_option("--checkpoint-every", a.q.fleet.checkpoint_every,
                  "Steps between checkpoints (default 0: none)")
      ->check(CLI::Range(0, 100'000'000));
  cmd->add_option("--checkpoint-s", a.q.fleet.checkpoint_s, "A checkpoint's pause (seconds)")
      ->check(finite_in(0, 3600));
  cmd->add_option("--seed", a.q.fleet.seed, "Seed of the jitter (default 1)")->check(seed_value());
  cmd->add_option("--spec", a.q.spec, "A grid spec: a JSON file or a shipped name");
  output(cmd->add_option("-o,--output", a.out, "Write the fleet's power as CSV (t_s,power_w)"));
  output(cmd->add_option("--json", a.json,
                         "Write the figures, the spectrum and the verdicts as JSON"));
  cmd->callback([] { exit_code() = run_fleet(a); });
  return cmd;
}

}  // namespace powershape::cli
