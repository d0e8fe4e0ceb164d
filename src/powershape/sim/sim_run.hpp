#pragma once
// sim's one call: a workload run on a simulated device (a profile in a power mode, at a power
// limit or clock cap), checked before it starts, and its summaries; then its printer.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "powershape/analysis/summary.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/sim/simulator.hpp"
#include "powershape/workload/kind.hpp"

namespace powershape::sim {

struct SimRequest {
  std::string profile = "h200";
  std::string power_mode;  // one of the profile's; empty: as it is
  workload::WorkloadArgs workload;
  SimOptions run = [] {
    SimOptions o;
    o.seconds = 10;
    return o;
  }();  // iterations > 0 run that many instead of the seconds
  double step_ms = 0.1;
};

struct SimRun {
  Profile profile;
  workload::Plan plan;
  SimResult result;
  std::vector<analysis::Summary> summaries;
};

struct SimSay {
  // A power limit above the profile's own (up to twice it): the card would refuse it; simulated
  // as asked.
  std::function<void(const std::string&)> warn;
  std::function<void(const std::string&)> start;  // what runs on what, once checked
};

// Throws invalid_input naming what is out of range before anything is simulated.
SimRun run_sim(SimRequest q, const SimSay& say);
// The run's summaries (`kept_in`: where those a long table leaves out are kept), then its own
// figures.
void print_sim_run(std::FILE* out, const SimRun& r, const std::string& kept_in);

}  // namespace powershape::sim
