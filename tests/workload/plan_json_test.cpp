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
      "phases[1].bytes: expected a count from 1 to 1e+16");
  EXPECT_EQ(error_of(R"({"phases": [{"kind": "compute", "flops": 5, "efficiency": 2}]})"),
            "phases[0].efficiency: expected a positive number up to 1");
  // A misspelt field is named, not ignored; values that would never finish are refused.
  EXPECT_EQ(error_of(R"({"phases": [{"kind": "compute", "flops": 5, "efficency": 0.5}]})"),
            "phases[0].efficency: unknown field");
  EXPECT_EQ(error_of(R"({"phase": []})"), "plan.phase: unknown field");
  EXPECT_EQ(error_of(R"({"phases": [{"kind": "compute", "flops": 1e300}]})"),
            "phases[0].flops: expected a count from 1 to 1e+18");
  EXPECT_EQ(error_of(R"({"phases": [{"kind": "compute", "flops": 1e-300}]})"),
            "phases[0].flops: expected a count from 1 to 1e+18");
  EXPECT_EQ(error_of(R"({"phases": [{"kind": "idle", "seconds": 1e9}]})"),
            "phases[0].seconds: expected a positive number up to 3600");
  EXPECT_EQ(error_of(R"({"phases": [{"kind": "warp"}]})"),
            "phases[0].kind: expected compute, memory or idle, found 'warp'");
}

}  // namespace powershape::workload
