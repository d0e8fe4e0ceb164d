#pragma once
// `sim fleet`'s one call: one rank's step from the workload on the profile, the all-reduce from the
// ring model (or as given), the fleet simulated (fleet.hpp) and its swing against a grid spec; then
// its printer and JSON.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/swing.hpp"
#include "powershape/sim/fleet.hpp"
#include "powershape/workload/kind.hpp"

namespace powershape::sim {

struct FleetRequest {
  std::string profile = "h200";
  workload::WorkloadArgs workload;
  FleetOptions fleet;    // its allreduce_s is set from the four below
  int iterations = 1;    // the workload's a step (gradient accumulation)
  double grad_gb = 1.0;  // the gradient all-reduced a step
  double bus_gb_per_s = 45, hop_us = 5;
  double allreduce_ms = -1;  // >= 0: the exposed all-reduce as given, not the ring model's
  double comm_share = 0.1;   // a collective's power between idle (0) and the limit (1)
  std::string spec = analysis::kDefaultGridSpec;
};

struct FleetRun {
  FleetRequest request;  // with the all-reduce's time resolved
  Profile profile;
  std::string workload;  // the plan's name
  RankStep rank;
  Fleet fleet;
  analysis::GridSpec spec;
  analysis::Swing swing;
};

// Throws invalid_input naming the option at fault (two chunk counts, a spec, a range).
FleetRun fleet_run(FleetRequest q);
void print_fleet_run(std::FILE* out, const FleetRun& r);
nlohmann::json to_json(const FleetRun& r);

}  // namespace powershape::sim
