#include "powershape/sim/sim_source.hpp"

#include "powershape/sim/profile.hpp"
#include "powershape/sim/simulator.hpp"
#include "powershape/trace/open_source.hpp"
#include "powershape/trace/replay_source.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::sim {

std::unique_ptr<telemetry::Source> open_source(const std::string& spec,
                                               const std::vector<int>& gpus) {
  if (spec.rfind("sim:", 0) != 0) return trace::open_source(spec, gpus);
  const std::string profile = spec.substr(4);
  const Profile p = load_profile(profile);
  SimOptions o;
  o.seconds = 600;
  o.lead_in_s = 0;
  o.step_s = 1e-3;
  SimResult r = simulate(p, workload::lmhead_plan({16384, 896, 151936}, 1), o);
  return std::make_unique<trace::ReplaySource>(std::move(r.trace), "sim:" + profile);
}

}  // namespace powershape::sim
