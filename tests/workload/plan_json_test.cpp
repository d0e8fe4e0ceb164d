#include "powershape/workload/plan_json.hpp"

#include <gtest/gtest.h>

#include "error_of.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::workload {

std::string error_of(const char* text) {
  return testing::error_of([&] { plan_from_json(nlohmann::json::parse(text)); });
}

TEST(PlanJson, RoundTrips) {
  Plan p = lmhead_plan({100, 64, 1000}, 2);
  Plan q = plan_from_json(to_json(p));
  ASSERT_EQ(q.phases.size(), p.phases.size());
  EXPECT_DOUBLE_EQ(q.total_flops(), p.total_flops());
  EXPECT_DOUBLE_EQ(q.phases[1].bytes, p.phases[1].bytes);
}

TEST(PlanJson, NamesTheBadField) {
  EXPECT_EQ(error_of(R"({"phases": []})"), "phases: expected a non-empty array");
  EXPECT_EQ(error_of(R"({"phases": [{"kind": "compute"}]})"), "phases[0].flops: missing");
  EXPECT_EQ(
      error_of(R"({"phases": [{"kind": "idle", "seconds": 1}, {"kind": "memory", "bytes": -5}]})"),
      "phases[1].bytes: expected a positive number");
  EXPECT_EQ(error_of(R"({"phases": [{"kind": "compute", "flops": 5, "efficiency": 2}]})"),
            "phases[0].efficiency: expected at most 1");
  EXPECT_EQ(error_of(R"({"phases": [{"kind": "warp"}]})"),
            "phases[0].kind: expected compute, memory or idle, found 'warp'");
}

}  // namespace powershape::workload
