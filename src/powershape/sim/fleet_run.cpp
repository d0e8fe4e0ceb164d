#include "powershape/sim/fleet_run.hpp"

#include <algorithm>

#include "powershape/analysis/swing_print.hpp"
#include "powershape/util/error.hpp"

namespace powershape::sim {

FleetRun fleet_run(FleetRequest q) {
  FleetRun r;
  r.spec = analysis::load_grid_spec(q.spec);
  r.profile = load_profile(q.profile);
  const Profile& p = r.profile;
  auto plans = workload_plans(q.workload, {p.peak_flops_per_s(), p.peak_bytes_per_s()});
  if (plans.size() != 1)
    throw invalid_input("chunks", "a fleet runs one chunk count (repro compares several)");
  r.workload = plans.front().name;
  const double dt = std::min(1e-3, q.fleet.resolution_s);
  r.rank = rank_step(p, plans.front(), q.iterations, 2.0, dt, q.comm_share);
  q.fleet.allreduce_s = q.allreduce_ms >= 0 ? q.allreduce_ms * 1e-3
                                            : allreduce_seconds(q.grad_gb * 1e9, q.fleet.gpus,
                                                                q.bus_gb_per_s, q.hop_us);
  r.fleet = simulate_fleet(r.rank, q.fleet);
  r.swing = analysis::analyse_swing(
      r.fleet.power, r.spec,
      analysis::swing_options(r.spec, p.power_limit_w * static_cast<double>(q.fleet.gpus)));
  r.request = std::move(q);
  return r;
}

void print_fleet_run(std::FILE* out, const FleetRun& r) {
  print_fleet(out, r.fleet, r.request.fleet, r.rank, r.profile, r.workload, r.request.iterations);
  analysis::print_swing(out, r.swing, r.spec);
}

nlohmann::json to_json(const FleetRun& r) {
  nlohmann::json j = analysis::to_json(r.swing);
  j.update(to_json(r.fleet, r.request.fleet));
  j["spec"] = {{"name", r.spec.name}, {"source", r.spec.source}};
  return j;
}

}  // namespace powershape::sim
