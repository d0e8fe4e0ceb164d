#include "powershape/advise/advise_run.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "error_of.hpp"
#include "printed.hpp"

namespace powershape::advise {
namespace {

AdviseRequest quick() {
  AdviseRequest q;
  q.workload.workload = "lmhead";
  q.workload.shape = "1024,896,151936";
  q.device = "sim:jetson-agx-orin";
  q.points = 2;
  q.sim.seconds = 0.3;
  q.sim.seeds = 2;
  return q;
}

std::string printed(const AdviseRun& r, bool every) {
  return testing::printed([&](std::FILE* f) { print_advise_run(f, r, every, "HINT", "MEASURE"); });
}

std::string refused(const AdviseRequest& q) {
  return testing::refused_for([&] { advise(q); });
}

}  // namespace

// On a simulated device: the profile's knobs, a choice among the outcomes, its JSON; the table
// either whole or the choice and the GPU as found with how many more and how to see them.
TEST(AdviseRun, OnASimulatedDeviceAsTheCliPrintsIt) {
  const AdviseRun r = advise(quick());
  ASSERT_TRUE(r.simulated.has_value());
  EXPECT_FALSE(r.from_trace.has_value());
  ASSERT_GE(r.outcomes().size(), 3u);
  EXPECT_TRUE(r.outcomes()[0].setting.is_default());
  const auto j = to_json(r);
  EXPECT_EQ(j.at("device"), "sim:jetson-agx-orin");
  EXPECT_EQ(j.at("outcomes").size(), r.outcomes().size());
  EXPECT_EQ(j.at("recommended"), j.at("outcomes")[r.chosen()]);
  const std::string some = printed(r, false), all = printed(r, true);
  EXPECT_NE(some.find("more settings: HINT)"), std::string::npos) << some;
  EXPECT_EQ(all.find("more settings"), std::string::npos) << all;
  EXPECT_EQ(all.find("MEASURE"), std::string::npos);  // said of a trace's prediction alone
}

// From a recorded trace: no setting was run, and the printer says how to measure the choice.
TEST(AdviseRun, FromATraceSaysItIsNotValidated) {
  AdviseRequest q;
  q.trace = POWERSHAPE_DATA "/h200/sustained_60s_trace.csv";
  q.profile = "h200";
  const AdviseRun r = advise(q);
  ASSERT_TRUE(r.from_trace.has_value());
  EXPECT_EQ(to_json(r).at("source"), q.trace);
  EXPECT_NE(printed(r, true).find("not validated: the GPU was not run at these settings (predicted "
                                  "from the clocks it visited by itself); MEASURE"),
            std::string::npos);
}

// What cannot be asked is named by its option, before anything is simulated.
TEST(AdviseRun, WhatCannotBeAskedIsNamed) {
  AdviseRequest q = quick();
  const analysis::GridSpec spec;
  q.grid = &spec;  // a swing needs recorded power
  EXPECT_EQ(refused(q), "grid");
  q = quick();
  q.workload.chunks = "1,2";
  EXPECT_EQ(refused(q), "chunks");
  q = quick();
  q.device = "";  // the GPU if there is one: not a simulated device
  EXPECT_EQ(refused(q), "device");
}

}  // namespace powershape::advise
