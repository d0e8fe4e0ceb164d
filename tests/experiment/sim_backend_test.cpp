#include "powershape/experiment/sim_backend.hpp"

#include <gtest/gtest.h>

#include "powershape/experiment/engine.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::experiment {

TEST(SimBackend, ShortBurstsBeatLongOnesOnTheSimulatedH200) {
  SimBackend b(sim::load_profile("h200"), {});
  b.set_configs({workload::square_plan({10, 0.5, workload::Gap::kIdle}, b.peak_rates()),
                 workload::square_plan({2000, 0.5, workload::Gap::kIdle}, b.peak_rates())});
  Design d;
  d.rounds = 3;
  d.window_s = 4;
  auto r = run_design(b, d);
  EXPECT_TRUE(r.settled);
  // The long bursts are throttled: lower compute throughput, found significant.
  EXPECT_LT(r.configs[1].compute_tflops, r.configs[0].compute_tflops * 0.93);
  EXPECT_GT(r.configs[1].power_capped, 0.3);
  EXPECT_GE(r.measurements.front().energy_updates, 10);  // a window spans 10 counter updates
  auto response = step_response_ms(b, 0);
  EXPECT_FALSE(response.has_value());  // 5 ms bursts never pull the reported clock down
}

TEST(SimBackend, AnLmHeadsThroughputCountsItsWholeStepAsTheGpuBackendDoes) {
  SimBackend b(sim::load_profile("h200"), {});
  const workload::Plan plan = workload::lmhead_plan({16384, 896, 151936}, 4);
  b.set_configs({plan});
  const Measurement m = b.measure(0, 1);
  // The softmax's time is in the denominator: FLOPs over the step, not over the products alone.
  EXPECT_NEAR(m.compute_tflops, plan.total_flops() / m.ms_per_iteration * 1e-9,
              m.compute_tflops * 0.01);
}

}  // namespace powershape::experiment
