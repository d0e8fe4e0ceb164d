#include "powershape/sim/fleet_run.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "error_of.hpp"
#include "printed.hpp"

namespace powershape::sim {
namespace {

FleetRequest small() {
  FleetRequest q;
  q.workload.workload = "msm";
  q.workload.shape = "4096,4096,32768";
  q.fleet.gpus = 1000;
  q.fleet.seconds = 20;
  q.iterations = 4;
  return q;
}

}  // namespace

// The all-reduce from the ring model unless given; the swing's period is the fleet's step; the JSON
// carries the fleet's figures beside the swing's and names the spec.
TEST(FleetRun, TheFleetsStepIsTheSwingsPeriod) {
  FleetRequest q = small();
  const FleetRun r = fleet_run(q);
  EXPECT_DOUBLE_EQ(r.request.fleet.allreduce_s, allreduce_seconds(1e9, 1000, 45, 5));
  ASSERT_GT(r.fleet.steps, 10);
  EXPECT_NEAR(r.swing.period_s, r.fleet.mean_step_s, 0.05 * r.fleet.mean_step_s);
  EXPECT_DOUBLE_EQ(r.swing.rated_w, r.profile.power_limit_w * 1000);
  const auto j = to_json(r);
  EXPECT_EQ(j.at("spec").at("name"), "grid-example");
  EXPECT_EQ(j.at("gpus"), 1000);
  const std::string out = testing::printed([&](std::FILE* f) { print_fleet_run(f, r); });
  EXPECT_NE(out.find("1000"), std::string::npos) << out;
  EXPECT_NE(out.find("verdict:"), std::string::npos) << out;
  q.allreduce_ms = 30;
  EXPECT_DOUBLE_EQ(fleet_run(q).request.fleet.allreduce_s, 0.030);
}

TEST(FleetRun, OneChunkCountOnly) {
  FleetRequest q = small();
  q.workload.chunks = "1,2";
  EXPECT_EQ(testing::refused_for([&] { fleet_run(q); }), "chunks");
}

}  // namespace powershape::sim
