#include "powershape/experiment/probe_curve.hpp"

#include <gtest/gtest.h>

#include "powershape/experiment/open_backend.hpp"
#include "powershape/util/error.hpp"

namespace powershape::experiment {
namespace {

ProbeOptions small() {
  ProbeOptions o;
  o.gaps = {"idle"};
  o.periods_ms = {2, 50};
  o.workload.duty = 0.5;
  o.window_s = 0.5;
  return o;
}

// A curve on the simulated H200: a point a period, told as measured, the boost the best of them,
// the power window a burst that ran within 3% of it, and the JSON probe -o writes.
TEST(ProbeCurve, MeasuresEachPointAndTheFiguresFromThem) {
  auto b = open_backend("sim:h200", 1, nullptr);
  std::vector<int> heard;
  const ProbeCurve c = probe_curve(*b, small(), [&](const ProbePoint& pt, int done, int total) {
    EXPECT_EQ(total, 2);
    EXPECT_GT(pt.m.compute_tflops, 0);
    heard.push_back(done);
  });
  EXPECT_EQ(heard, (std::vector<int>{1, 2}));
  ASSERT_EQ(c.points.size(), 2u);
  EXPECT_EQ(c.points[1].period_ms, 50);
  for (const auto& pt : c.points) EXPECT_LE(pt.m.compute_tflops, c.boost_tflops);
  EXPECT_GT(c.sustained.compute_tflops, 0);
  EXPECT_GT(c.power_window_ms, 0);
  EXPECT_LE(c.power_window_ms, 25);  // a burst is half its period
  const auto j = to_json(c, *b);
  EXPECT_EQ(j.at("points").size(), 2u);
  EXPECT_DOUBLE_EQ(j.at("boost_tflops").get<double>(), c.boost_tflops);
  EXPECT_TRUE(j.contains("step_response_ms"));
}

TEST(ProbeCurve, ABadOptionIsNamedBeforeAnythingRuns) {
  auto b = open_backend("sim:h200", 1, nullptr);
  const auto subject_of = [&](ProbeOptions o) {
    try {
      probe_curve(*b, o);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
      return e.subject();
    }
    return std::string("none");
  };
  auto o = small();
  o.workload.duty = 1;
  EXPECT_EQ(subject_of(o), "duty");
  o = small();
  o.periods_ms = {0};
  EXPECT_EQ(subject_of(o), "periods");
  o.periods_ms = {};
  EXPECT_EQ(subject_of(o), "periods");
  o = small();
  o.gaps = {"busy"};
  EXPECT_EQ(subject_of(o), "gaps");
  EXPECT_EQ(parse_gaps("memory,idle"), (std::vector<std::string>{"memory", "idle"}));
  EXPECT_THROW(parse_gaps("idle,"), Error);
}

}  // namespace
}  // namespace powershape::experiment
