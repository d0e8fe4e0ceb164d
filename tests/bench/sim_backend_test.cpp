#include "powershape/bench/sim_backend.hpp"

#include <gtest/gtest.h>

#include "powershape/bench/engine.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::bench {

TEST(SimBackend, ShortBurstsBeatLongOnesOnTheSimulatedH200) {
  SimBackend b(sim::load_profile("h200"), {});
  b.set_configs({workload::square_plan(0.01, 0.5, workload::Gap::kIdle, b.peak_flops_per_s(), b.peak_bytes_per_s()),
                 workload::square_plan(2.0, 0.5, workload::Gap::kIdle, b.peak_flops_per_s(), b.peak_bytes_per_s())});
  Design d;
  d.rounds = 3;
  d.window_s = 4;
  auto r = run_design(b, d);
  EXPECT_TRUE(r.settled);
  // The long bursts are throttled: lower compute throughput, found significant.
  EXPECT_LT(r.configs[1].compute_tflops, r.configs[0].compute_tflops * 0.93);
  EXPECT_GT(r.configs[1].power_capped, 0.3);
  EXPECT_GE(r.measurements.front().energy_updates, 10);  // a window spans 10 counter updates
  auto response = b.step_response_ms(0);
  EXPECT_FALSE(response.has_value());  // 5 ms bursts never pull the reported clock down
}

}  // namespace powershape::bench
