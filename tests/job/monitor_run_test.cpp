#include "powershape/job/monitor_run.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "printed.hpp"

namespace powershape::job {
namespace {

struct Said {
  std::vector<std::string> notes, outputs;
  MonitorSay say() {
    return {[this](const std::string& s) { notes.push_back(s); },
            [this](const std::string& o, const std::string& w) { outputs.push_back(o + ": " + w); },
            "KEPT"};
  }
};

// A replayed H200 recording around `command`, what it printed and its exit code.
int run(MonitorRun o, const std::vector<std::string>& command, Said& said, std::string* printed) {
  o.source = "fake:" POWERSHAPE_DATA "/h200/gemm_sustained_trace.csv";
  o.interval_ms = 5;
  o.command = command;
  int code = 0;
  *printed = testing::printed([&](std::FILE* f) { code = run_monitor(o, f, said.say()); });
  return code;
}

}  // namespace

// The command's exit code comes back; its summary is printed and its JSON written.
TEST(MonitorRun, TheCommandsCodeAndItsSummary) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ps_monitor_run_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  MonitorRun o;
  o.outputs.json = (dir / "m.json").string();
  Said said;
  std::string printed;
  EXPECT_EQ(run(o, {"sh", "-c", "sleep 0.2; exit 3"}, said, &printed), 3);
  EXPECT_NE(printed.find("'sh -c sleep 0.2; exit 3'"), std::string::npos) << printed;
  EXPECT_TRUE(std::filesystem::file_size(dir / "m.json") > 0);
  EXPECT_TRUE(said.outputs.empty());
  std::filesystem::remove_all(dir);
}

// An output that cannot be written is named, the others are written, and a command that succeeded
// then fails the run; an energy a token asked of a command with no steps says what it needs.
TEST(MonitorRun, ALostOutputFailsASuccessfulRun) {
  MonitorRun o;
  o.outputs.json = "/nonexistent-dir/m.json";
  o.tokens_per_step = 1000;
  Said said;
  std::string printed;
  EXPECT_EQ(run(o, {"true"}, said, &printed), 1);
  ASSERT_EQ(said.outputs.size(), 1u);
  EXPECT_EQ(said.outputs[0].rfind("json: ", 0), 0u) << said.outputs[0];
  EXPECT_NE(printed.find("energy a token: none: it needs the command's steps marked"),
            std::string::npos)
      << printed;
}

// The periods are bounded before anything opens.
TEST(MonitorRun, APeriodOutOfBoundsIsRefusedFirst) {
  MonitorRun o;
  o.interval_ms = 0;
  o.source = "fake:/nonexistent.csv";
  Said said;
  EXPECT_THROW(run_monitor(o, stderr, said.say()), std::exception);
  try {
    run_monitor(o, stderr, said.say());
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("interval"), std::string::npos) << e.what();
  }
}

}  // namespace powershape::job
