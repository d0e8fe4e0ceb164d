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

TEST(SimBackend, EachKernelTimedHasTheClockItRanAt) {
  SimBackend b(sim::load_profile("h200"), {});
  b.set_configs({workload::msm_plan({65536, 512, 65536}, 1)});
  b.measure(0, 1);  // warm, as probe --record times kernels after its square waves
  const auto ks = b.time_kernels(0, 3);
  ASSERT_EQ(ks.size(), 3u);  // qk, softmax, pv
  // The fast limiter holds the products under the clock the memory-bound softmax runs at (the
  // skinny qk, k = 512, less busy than pv, less so).
  EXPECT_EQ(ks[1].name, "softmax");
  EXPECT_GT(ks[1].real_mhz, ks[0].real_mhz);
  EXPECT_GT(ks[1].real_mhz, ks[2].real_mhz + 100);
  EXPECT_LE(ks[1].real_mhz, 1980);
  EXPECT_GT(ks[0].real_mhz, 1000);
}

}  // namespace powershape::experiment
