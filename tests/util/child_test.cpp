#include "powershape/util/child.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "powershape/util/error.hpp"

namespace powershape::util {
namespace {

int wait_for(Child& c) {
  for (int i = 0; i < 2000 && !c.poll(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return c.exit_code();
}

}  // namespace

// A command's exit code as a shell reports it, its environment extended, a signal as 128 + N.
TEST(Child, ReportsExitCodesEnvironmentAndSignals) {
  Child ok({"sh", "-c", "exit 7"}, {});
  EXPECT_EQ(wait_for(ok), 7);
  Child env({"sh", "-c", "test \"$POWERSHAPE_T\" = yes"}, {"POWERSHAPE_T=yes"});
  EXPECT_EQ(wait_for(env), 0);
  // One inherited is replaced, not shadowed: getenv reads the first of a name (a recorder inside
  // another gives its own FIFO).
  setenv("POWERSHAPE_T", "outer", 1);
  Child once({"sh", "-c", "test \"$(env | grep -c '^POWERSHAPE_T=')\" = 1"}, {"POWERSHAPE_T=yes"});
  EXPECT_EQ(wait_for(once), 0);
  unsetenv("POWERSHAPE_T");
  Child slow({"sleep", "30"}, {});
  slow.signal(SIGTERM);
  EXPECT_EQ(wait_for(slow), 128 + SIGTERM);
}

// A command that cannot start is a caller's mistake, named.
TEST(Child, ACommandThatCannotStartIsNamed) {
  try {
    Child missing({"/nonexistent/cmd"}, {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/cmd"), std::string::npos);
  }
  EXPECT_THROW(Child({}, {}), Error);
}

}  // namespace powershape::util
