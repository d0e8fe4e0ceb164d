#include "powershape/advise/hold.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "advise/fake_target.hpp"
#include "powershape/util/child.hpp"
#include "powershape/util/signals.hpp"

namespace powershape::advise {
namespace fs = std::filesystem;

// The setting holds while the command runs (the command sees it), is put back after it, and the
// command's exit code comes back; each step is said.
TEST(Hold, ACommandRunsUnderTheSettingThenItIsPutBack) {
  const fs::path dir = fs::temp_directory_path() / ("ps_hold_" + std::to_string(getpid()));
  FakeTarget target;
  std::vector<std::string> said;
  const auto say = [&](const std::string& l) { said.push_back(l); };
  // The record is on disk while the command runs: the command checks it.
  const int code = hold_while(target, {1410, 0}, dir.string(),
                              {"sh", "-c", "ls '" + dir.string() + "' | grep -q . && exit 7"}, say);
  EXPECT_EQ(code, 7);
  EXPECT_EQ(target.sets, 1);
  EXPECT_EQ(target.cap, 0);
  EXPECT_TRUE(fs::is_empty(dir));
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0], "set clock cap 1410 MHz on fake GPU");
  EXPECT_EQ(said[1], "put fake GPU back as it was");
  // As found: nothing set, nothing said, the code all the same.
  said.clear();
  EXPECT_EQ(hold_while(target, {}, dir.string(), {"sh", "-c", "exit 3"}, say), 3);
  EXPECT_EQ(target.sets, 1);
  EXPECT_TRUE(said.empty());
  // A command that cannot start: refused, and the setting back.
  EXPECT_THROW(hold_while(target, {990, 0}, dir.string(), {"/nonexistent/x"}, say), std::exception);
  EXPECT_EQ(target.cap, 0);
  fs::remove_all(dir);
}

// Without a command it holds until a signal, then puts it back: 128 + the signal.
TEST(Hold, WithoutACommandItHoldsUntilASignal) {
  const fs::path dir = fs::temp_directory_path() / ("ps_hold_sig_" + std::to_string(getpid()));
  FakeTarget target;
  std::vector<std::string> said;
  std::thread stop([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kill(getpid(), SIGTERM);
  });
  const int code = hold_while(target, {1200, 0}, dir.string(), {},
                              [&](const std::string& l) { said.push_back(l); });
  stop.join();
  util::forward_signals_to(0);
  EXPECT_EQ(code, 128 + SIGTERM);
  EXPECT_EQ(target.cap, 0);
  ASSERT_EQ(said.size(), 3u);
  EXPECT_NE(said[1].find("holding it"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace powershape::advise
