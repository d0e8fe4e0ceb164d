#include "powershape/sim/sim_run.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "printed.hpp"

namespace powershape::sim {
namespace {

SimRequest short_run() {
  SimRequest q;
  q.workload.workload = "lmhead";
  q.workload.shape = "4096,896,151936";
  q.run.seconds = 0.2;
  return q;
}

}  // namespace

// A limit above the card's own is simulated with a warning; what runs is said once checked; the
// summaries and the run's figures are printed.
TEST(SimRun, ALimitAboveTheCardsOwnIsWarnedOfAndSimulated) {
  SimRequest q = short_run();
  q.run.power_limit_w = 1000;
  std::vector<std::string> warned, started;
  const SimRun r = run_sim(q, {[&](const std::string& w) { warned.push_back(w); },
                               [&](const std::string& s) { started.push_back(s); }});
  ASSERT_EQ(warned.size(), 1u);
  EXPECT_NE(warned[0].find("above h200's own 700 W limit"), std::string::npos) << warned[0];
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].rfind("simulated device: h200", 0), 0u) << started[0];
  EXPECT_FALSE(r.summaries.empty());
  const std::string out = testing::printed([&](std::FILE* f) { print_sim_run(f, r, "KEPT"); });
  EXPECT_NE(out.find("'" + r.plan.name + "'"), std::string::npos) << out;
  q.run.power_limit_w = 0;
  warned.clear();
  run_sim(q, {[&](const std::string& w) { warned.push_back(w); }, {}});
  EXPECT_TRUE(warned.empty());
}

// Refused before anything runs: two chunk counts, a limit the card cannot take.
TEST(SimRun, WhatCannotBeSimulatedIsNamedFirst) {
  SimRequest q = short_run();
  q.workload.chunks = "1,2";
  bool started = false;
  const SimSay say{{}, [&](const std::string&) { started = true; }};
  EXPECT_EQ(testing::refused_for([&] { run_sim(q, say); }), "chunks");
  q = short_run();
  q.run.power_limit_w = 5;
  EXPECT_EQ(testing::refused_for([&] { run_sim(q, say); }), "power-limit");
  EXPECT_FALSE(started);
}

}  // namespace powershape::sim
