#include "powershape/advise/advice.hpp"

#include <gtest/gtest.h>

#include "powershape/trace/csv_reader.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::advise {

// From a recorded H200 trace: classes, the baseline first among the outcomes, a choice among
// them, the selector's pick; a GPU the trace lacks is the caller's mistake, named.
TEST(Advice, FromATraceAsTheCliPrintsIt) {
  const auto t = trace::read_csv(POWERSHAPE_DATA "/h200/sustained_60s_trace.csv");
  TraceAdviceOptions o;
  o.profile = "h200";
  o.objective = experiment::parse_objective("energy", 1);
  const TraceAdvice r = from_trace(t, "sustained", o);
  EXPECT_EQ(r.profile, "h200");
  EXPECT_FALSE(r.shares.empty());
  ASSERT_GT(r.outcomes.size(), 2u);
  EXPECT_TRUE(r.outcomes[0].setting.is_default());
  EXPECT_LT(r.chosen, r.outcomes.size());
  EXPECT_GT(r.objective.p_max_w, 0);
  EXPECT_TRUE(r.selector_pick.has_value());
  o.gpu = 3;
  try {
    from_trace(t, "sustained", o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(e.subject(), "gpu");
  }
}

// On the simulated Jetson: its knobs default to clock and mode, every outcome simulated.
TEST(Advice, OnTheSimulatorTheKnobsFollowTheDevice) {
  const sim::Profile p = sim::load_profile("jetson-agx-orin");
  const auto plan = workload::make_plan({workload::LmHead{1024, 896, 151936}, 1},
                                        {p.peak_flops_per_s(), p.peak_bytes_per_s()});
  SimAdviseOptions so;
  so.seconds = 0.3;
  so.seeds = 2;
  const SimAdvice r =
      on_simulator(p, plan, {}, experiment::parse_objective("energy", 1), -1, 2, so);
  ASSERT_GE(r.outcomes.size(), 2u);
  EXPECT_LT(r.chosen, r.outcomes.size());
  EXPECT_GE(r.every, r.outcomes.size());
  bool mode = false;
  for (const auto& x : r.outcomes) mode |= !x.setting.power_mode.empty();
  EXPECT_TRUE(mode);
  EXPECT_GT(r.simulations, 0);
}

}  // namespace powershape::advise
