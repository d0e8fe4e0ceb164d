#include "powershape/experiment/command_backend.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "powershape/util/error.hpp"

namespace powershape::experiment {

// Commands after `--`, split at ":::", or one command scanned over a list of values.
TEST(CommandBackend, CommandsFromWordsAndScans) {
  const auto two = commands_from({"sleep", "1", ":::", "true"}, {});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0], (std::vector<std::string>{"sleep", "1"}));
  const auto scanned = commands_from({"sh", "-c", "exit {n}"}, {"n", "1,2,3"});
  ASSERT_EQ(scanned.size(), 3u);
  EXPECT_EQ(scanned[2][2], "exit 3");
  try {
    commands_from({"true"}, {"n", "1,,2"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_EQ(e.subject(), "parameter-list");
  }
  EXPECT_THROW(commands_from({"true"}, {}), Error);            // one command
  EXPECT_THROW(commands_from({"true", ":::"}, {}), Error);     // an empty one
  EXPECT_THROW(commands_from({"true"}, {"n", "1,2"}), Error);  // no {n} to replace
}

// hyperfine's way: each argument a quoted shell command; a command with one quoted argument
// (python -c "a; b") stays one command.
TEST(CommandBackend, EachQuotedArgumentIsAShellCommand) {
  const auto two = commands_from({"sleep 0.1", "sleep 0.2"}, {});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1], (std::vector<std::string>{"sh", "-c", "sleep 0.2"}));
  EXPECT_THROW(commands_from({"python3", "-c", "import a; b"}, {}), Error);  // one command
  const auto split = commands_from({"sleep 1", ":::", "sleep 2"}, {});
  EXPECT_EQ(split[0], (std::vector<std::string>{"sleep 1"}));  // ::: keeps the words as given
}

// A command's run measured whole under the recorded telemetry (a replayed trace here): its wall
// time, energy from the samples over it; one that fails is named.
TEST(CommandBackend, MeasuresEachRunAndNamesOneThatFails) {
  CommandBackend b({{"sleep", "0.05"}, {"sleep", "0.3"}, {"sh", "-c", "exit 3"}},
                   "fake:" POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv");
  EXPECT_EQ(b.config_count(), 3u);
  EXPECT_EQ(b.config_name(1), "sleep 0.3");
  const Measurement quick = b.measure(0, 0), slow = b.measure(1, 0);
  EXPECT_EQ(quick.iterations, 1);
  EXPECT_GT(slow.ms_per_iteration, quick.ms_per_iteration + 150);
  EXPECT_GT(slow.energy_j, 0);
  try {
    b.measure(2, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exit 3"), std::string::npos);
  }
  EXPECT_FALSE(b.recorded().samples.empty());
}

// A replayed recording's own regions (its `cond` column's: "warm" ends 2.9 s in) are no part of
// the measurement, during a run or between runs: the trace holds the runs' regions alone.
TEST(CommandBackend, TheSourcesOwnRegionsAreNotKept) {
  CommandBackend b({{"sleep", "0.5"}}, "fake:" POWERSHAPE_DATA "/h200/square_wave_idle_trace.csv");
  b.measure(0, 0);
  b.idle(2.9);
  b.measure(0, 0);
  const auto regions = b.recorded().regions;
  ASSERT_EQ(regions.size(), 2u);
  for (const auto& r : regions) EXPECT_EQ(r.name, "sleep 0.5");
}

// A job that marks 200,000 steps as fast as it can: measured by the latest kMaxSteps, in at most
// kMaxWindows energy windows, within seconds; their time is their own.
TEST(CommandBackend, AFloodOfStepsIsMeasuredInBoundedTime) {
  const char* job = R"PY(python3 -c "
import os, time
f = open(os.environ['POWERSHAPE_CONTROL'], 'w')
t = time.monotonic_ns()
for i in range(200000):
    f.write('begin %d step\\nend %d step\\n' % (t + 2000 * i, t + 2000 * i + 1000))
f.close()")PY";
  CommandBackend b({{"sh", "-c", job}}, "fake:" POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv");
  const auto t0 = std::chrono::steady_clock::now();
  const Measurement m = b.measure(0, 0);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(m.iterations, static_cast<int>(CommandBackend::kMaxSteps));
  EXPECT_NEAR(m.ms_per_iteration, 1e-3, 1e-9);  // 1 us each
  EXPECT_GT(m.energy_j, 0);
  EXPECT_LT(took, 30);
  // The run and the span of its steps are regions of the recording (what the report tabulates).
  const auto regions = b.recorded().regions;
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[1].name, b.config_name(0) + ": steps");
  EXPECT_GE(regions[1].begin_ns, regions[0].begin_ns);  // (this job's marks run past its end)
}

// A job that writes `marks` (Python lines that write to f, from t, the clock's ns at its start)
// to the monitor's FIFO, measured against a replayed recording.
static Measurement measured(const std::string& marks) {
  const std::string job =
      "python3 -c \"\nimport os, time\nf = open(os.environ['POWERSHAPE_CONTROL'], "
      "'w')\nt = time.monotonic_ns()\n" +
      marks + "\nf.close()\"";
  CommandBackend b({{"sh", "-c", job}}, "fake:" POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv");
  return b.measure(0, 0);
}

// A job that marks its steps and, inside each, its gap, all inside one region around its loop, is
// measured by its steps (the gap ends first, and once named the 45 ms gaps of a 265 ms step
// "steps"; the loop's region is one).
TEST(CommandBackend, StepsWithGapsInsideAreMeasuredByTheSteps) {
  const Measurement m = measured(R"PY(f.write('begin %d train\n' % t)
for i in range(10):
    s = t + 10000000 * i
    f.write('begin %d step\nbegin %d gap\nend %d gap\nend %d step\n' % (s, s + 6000000, s + 8000000, s + 9000000))
f.write('end %d train\n' % (t + 100000000)))PY");
  EXPECT_EQ(m.iterations, 10);
  EXPECT_NEAR(m.ms_per_iteration, 9.0, 1e-6);
}

// bench/finetune_loop.py marks its gaps from the first step and its steps only after five of
// warm-up: the first gaps are in no step, yet the steps are what is measured.
TEST(CommandBackend, GapsMarkedBeforeTheFirstStepDoNotTakeItsPlace) {
  const Measurement m = measured(R"PY(for i in range(10):
    s = t + 10000000 * i
    if i >= 5: f.write('begin %d step\n' % s)
    f.write('begin %d gap\nend %d gap\n' % (s + 6000000, s + 8000000))
    if i >= 5: f.write('end %d step\n' % (s + 9000000)))PY");
  EXPECT_EQ(m.iterations, 5);
  EXPECT_NEAR(m.ms_per_iteration, 9.0, 1e-6);
}

// Steps beside two longer evaluations, neither inside the other: the steps are what is measured.
TEST(CommandBackend, StepsBesideAFewLongerRegionsAreMeasuredByTheSteps) {
  const Measurement m = measured(R"PY(for i in range(2):
    f.write('begin %d eval\nend %d eval\n' % (t + 100000000 * i, t + 100000000 * i + 50000000))
for i in range(8):
    s = t + 200000000 + 10000000 * i
    f.write('begin %d step\nend %d step\n' % (s, s + 9000000)))PY");
  EXPECT_EQ(m.iterations, 8);
  EXPECT_NEAR(m.ms_per_iteration, 9.0, 1e-6);
}

// A command with a line break is quoted on one line in the error that names it.
TEST(CommandBackend, AFailedCommandIsNamedOnOneLine) {
  CommandBackend b({{"sh", "-c", "exit 3\n# a second line"}},
                   "fake:" POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv");
  try {
    b.measure(0, 0);
    FAIL();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find("exited with 3"), std::string::npos) << what;
  }
}

}  // namespace powershape::experiment
