// Simulator speed: simulated steps per second of this process's CPU time (user and system: the
// records' pages count) on one core, for a sustained product load and for a chunked LM head (many
// short phases), at 1 ms and 0.1 ms steps; the best and the median of five runs each. CPU time,
// not wall time: on a shared machine other processes' time would count against the simulator.
// Targets: 10 million 1 ms steps per second for the sustained load, 5 million for the 32-chunk LM
// head; the ratio printed is the best steps/s over the workload's target.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

#include "powershape/sim/simulator.hpp"
#include "powershape/workload/builders.hpp"

using namespace powershape;

int main() {
  sim::Profile p = sim::load_profile("h200");
  workload::Plan gemm;
  workload::Phase ph;
  ph.flops = 2.0 * 8192 * 8192 * 8192;
  gemm.phases.push_back(ph);
  workload::Plan lmhead = workload::lmhead_plan({16384, 896, 151936}, 32);
  std::printf("%-28s %8s %12s %14s %14s %8s\n", "workload", "step", "steps", "best steps/s",
              "median", "ratio");
  for (const auto* w : {&gemm, &lmhead}) {
    for (double step : {1e-3, 1e-4}) {
      sim::SimOptions o;
      o.step_s = step;
      o.seconds = 2000 * step * 1000;  // 2 million steps
      std::vector<double> rates;
      int64_t steps = 0;
      for (int rep = 0; rep < 5; ++rep) {
        const std::clock_t t0 = std::clock();
        auto r = sim::simulate(p, *w, o);
        const double secs = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
        rates.push_back(static_cast<double>(r.steps) / secs);
        steps = r.steps;
      }
      std::sort(rates.begin(), rates.end());
      std::printf("%-28s %6.1fms %12lld %14.3g %14.3g %8.2f\n",
                  w == &gemm ? "sustained 8192^3 products" : "lmhead 16384x896x151936/32",
                  step * 1e3, static_cast<long long>(steps), rates.back(), rates[2],
                  rates.back() / (w == &gemm ? 1e7 : 5e6));
    }
  }
  return 0;
}
