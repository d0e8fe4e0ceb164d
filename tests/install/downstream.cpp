// Simulates the LM head at 1 and 8 chunks on the installed h200 profile and prints the energy of
// one iteration of each: what a user's program can do with the installed library alone.
#include <cstdio>

#include "powershape/sim/simulator.hpp"
#include "powershape/util/share_dir.hpp"
#include "powershape/workload/builders.hpp"

int main() {
  using namespace powershape;
  const sim::Profile p = sim::load_profile("h200");
  for (int chunks : {1, 8}) {
    const workload::Plan plan = workload::lmhead_plan({4096, 896, 151936}, chunks);
    sim::SimOptions o;
    o.iterations = 20;
    const sim::SimResult r = sim::simulate(p, plan, o);
    std::printf("%s: %.3f J per iteration\n", plan.name.c_str(), r.run.energy_j / r.run.iterations);
  }
  std::printf("powershape %s, share %s\n", util::version(), util::share_dir().c_str());
  return 0;
}
