#include "powershape/optimize/optimize.hpp"

#include <gtest/gtest.h>

#include "powershape/analysis/grid_spec.hpp"
#include "powershape/util/error.hpp"

namespace powershape::optimize {
namespace {

const std::string kFake = std::string("fake:") + POWERSHAPE_DATA + "/h200/gemm_sustained_trace.csv";

// A whole run is the iteration: it sleeps 40 ms at 4 chunks, 160 ms at any other count, and as
// 1 chunk would without POWERSHAPE_CHUNKS. The gap is wide: each run also pays a process's start,
// which a loaded machine (a sanitized build beside another) stretches to tens of ms.
const std::vector<std::string> kJob = {
    "sh", "-c", "if [ \"${POWERSHAPE_CHUNKS:-1}\" = 4 ]; then sleep 0.04; else sleep 0.16; fi"};

Options options(std::vector<std::string> command, double budget_s) {
  Options o;
  o.command = std::move(command);
  o.source = kFake;
  o.chunks = {1, 2, 4};
  o.budget_s = budget_s;
  o.profile = "h200";
  return o;
}

}  // namespace

TEST(ChunkCommands, TheJobAsFoundFirstThenEachCountInItsEnvironment) {
  std::vector<std::string> names;
  const auto c = chunk_commands({"python3", "train.py"}, {2, 8}, &names);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_EQ(c[2], (std::vector<std::string>{"env", "POWERSHAPE_CHUNKS=8", "python3", "train.py"}));
  EXPECT_EQ(names,
            (std::vector<std::string>{"as found", "POWERSHAPE_CHUNKS=2", "POWERSHAPE_CHUNKS=8"}));
}

TEST(ChunkCommands, APlaceholderTakesTheCountAndLeavesNoAsFound) {
  const auto c = chunk_commands({"train", "--chunks={chunks}", "{chunks}x"}, {1, 4});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1],
            (std::vector<std::string>{"env", "POWERSHAPE_CHUNKS=4", "train", "--chunks=4", "4x"}));
  EXPECT_THROW(chunk_commands({"train", "{chunks}"}, {4}), Error);  // nothing to race
}

TEST(ChunkCommands, BadListsAreNamed) {
  EXPECT_THROW(chunk_commands({}, {1, 2}), Error);
  EXPECT_THROW(chunk_commands({"x"}, {}), Error);
  EXPECT_THROW(chunk_commands({"x"}, {0, 2}), Error);
  EXPECT_THROW(chunk_commands({"x"}, {2, 2}), Error);
  try {
    chunk_commands({"x"}, {4, 4});
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("4 is listed twice"), std::string::npos) << e.what();
  }
}

TEST(Optimize, RacesTheCountsAndRecommendsTheFastestWithinTheBudget) {
  const Result r = run(options(kJob, 30));
  ASSERT_TRUE(r.race.has_value());
  EXPECT_EQ(r.recommendation.kind, Recommendation::kChunks);
  EXPECT_EQ(r.recommendation.what, "POWERSHAPE_CHUNKS=4");
  EXPECT_TRUE(r.recommendation.measured);
  EXPECT_LT(r.recommendation.time_ratio.hi, 0.8);
  EXPECT_GT(r.recommendation.ms_saved_per_step, 20);
  EXPECT_LE(r.elapsed_s, 30);
  EXPECT_FALSE(r.diagnosis.by_steps);
  EXPECT_EQ(r.diagnosis.as_found.iterations, 1);
  // Each run is a region of the trace, named as its configuration.
  bool named = false;
  for (const auto& g : r.trace.regions) named |= g.name == "POWERSHAPE_CHUNKS=4";
  EXPECT_TRUE(named);
}

// A spec of a range and ramps alone, in W: `max_w` for the range, `ramp_w` each way; the ramp's
// window (the range's twice it) short enough for the runs (10 ms for a run of 40 ms).
analysis::GridSpec spec(double max_w, double ramp_w, double window_s = 0.01) {
  return analysis::grid_spec_from_json(
      {{"name", "test"},
       {"source", "a test"},
       {"ramp",
        {{"window_s", window_s},
         {"up_max_w_per_s", ramp_w},
         {"down_max_w_per_s", ramp_w},
         {"source", "a test"}}},
       {"range", {{"window_s", 2 * window_s}, {"max_w", max_w}, {"source", "a test"}}}});
}

TEST(Optimize, WithinALooseGridSpecTheChoiceIsAsWithoutOne) {
  Options o = options(kJob, 30);
  o.grid = spec(1e6, 1e9);
  const Result r = run(o);
  ASSERT_TRUE(r.race.has_value());
  EXPECT_EQ(r.recommendation.kind, Recommendation::kChunks);
  EXPECT_EQ(r.recommendation.what, "POWERSHAPE_CHUNKS=4");
  ASSERT_GE(r.grid.size(), 3u);  // the job as found and each count raced
  EXPECT_EQ(r.grid.front().name, "as found");
  for (const auto& c : r.grid)  // within it, unless a loaded machine left a run too few readings
    EXPECT_TRUE(c.pass() || c.exceeded().front().rfind("not analysed", 0) == 0) << c.name;
  EXPECT_EQ(to_json(r)["grid"].size(), r.grid.size());
}

TEST(Optimize, OutsideEveryConfigurationNothingIsRecommendedAndTheClosestNamed) {
  // Runs of 0.3 s and more: a 40 ms run may see a single replayed reading, whose range of 0 W
  // any spec holds.
  const std::vector<std::string> job = {
      "sh", "-c", "if [ \"${POWERSHAPE_CHUNKS:-1}\" = 4 ]; then sleep 0.3; else sleep 0.6; fi"};
  Options o = options(job, 30);
  o.grid = spec(1e-3, 1e9, 0.05);  // a range no replayed GPU holds
  o.grid_gpus = 1000;
  const Result r = run(o);
  EXPECT_EQ(r.recommendation.kind, Recommendation::kNone);
  bool named = false;
  for (const auto& n : r.notes)
    named |= n.find("no configuration is within the grid spec; the closest") != std::string::npos;
  EXPECT_TRUE(named);
  // Each exceeds the range; a run a loaded machine left too few readings is not analysed.
  bool range = false;
  for (const auto& c : r.grid) {
    EXPECT_FALSE(c.pass()) << c.name;
    range |= c.exceeded() == std::vector<std::string>{"range"};
  }
  EXPECT_TRUE(range);
}

TEST(FloorCommands, TheJobAsFoundUnderSmoothForEachFloor) {
  Options o;
  o.floors = {"60%", "450"};
  o.smooth_exe = "/usr/bin/powershape";
  o.floor_gap = "gap";
  std::vector<std::string> names;
  const auto c = floor_commands({"python3", "train.py"}, o, &names);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], (std::vector<std::string>{"/usr/bin/powershape", "smooth", "--floor", "60%",
                                            "--gap", "gap", "--", "python3", "train.py"}));
  EXPECT_EQ(names, (std::vector<std::string>{"floor 60%", "floor 450"}));
  for (const char* bad : {"", "%", "6x", "-5", "nan"}) {
    o.floors = {bad};
    EXPECT_THROW(floor_commands({"x"}, o), Error) << bad;
  }
  o.floors = {"60%"};
  o.smooth_exe.clear();
  EXPECT_THROW(floor_commands({"x"}, o), Error);
}

TEST(Optimize, AJobTheCountDoesNotChangeGetsNoRecommendation) {
  const Result r = run(options({"sh", "-c", "sleep 0.05"}, 30));
  EXPECT_EQ(r.recommendation.kind, Recommendation::kNone);
  EXPECT_FALSE(r.diagnosis.throttled());
}

TEST(Optimize, ABudgetTooShortToRaceSaysSoAndKeepsTheDiagnosis) {
  const Result r = run(options({"sh", "-c", "sleep 0.6"}, 2));
  EXPECT_FALSE(r.race.has_value());
  ASSERT_FALSE(r.notes.empty());
  bool said = false;
  for (const auto& n : r.notes) said |= n.find("nothing raced") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_LE(r.elapsed_s, 2);
  EXPECT_GT(r.diagnosis.run_s, 0.5);
}

TEST(Optimize, AJobOutlivingTheBudgetIsStopped) {
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(run(options({"sleep", "30"}, 1)), Error);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(Optimize, BadOptionsAreNamed) {
  EXPECT_THROW(run(options(kJob, 0)), Error);
  Options o = options(kJob, 10);
  o.tokens_per_step = -1;
  EXPECT_THROW(run(o), Error);
  o = options({"false"}, 10);
  EXPECT_THROW(run(o), Error);  // a job that fails as found
}

}  // namespace powershape::optimize
