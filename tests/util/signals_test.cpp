#include "powershape/util/signals.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "powershape/util/child.hpp"

namespace powershape::util {

// A hang-up is caught and passed on as SIGINT and SIGTERM are, but not where it was ignored
// (nohup): the command keeps nohup's protection. (Each test runs in a process of its own.)
TEST(Signals, AHangUpIsForwardedUnlessIgnored) {
  std::signal(SIGHUP, SIG_IGN);
  forward_signals_to(0);
  std::raise(SIGHUP);
  EXPECT_EQ(received_signal(), 0);  // still ignored: not caught
  std::signal(SIGHUP, SIG_DFL);
  Child job({"sleep", "30"}, {});
  forward_signals_to(job.pid());
  std::raise(SIGHUP);  // caught here (the test lives on), passed to the job, which dies of it
  EXPECT_EQ(received_signal(), SIGHUP);
  for (int i = 0; i < 2000 && !job.poll(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(job.exit_code(), 128 + SIGHUP);
  forward_signals_to(0);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) std::signal(s, SIG_DFL);
}

}  // namespace powershape::util
