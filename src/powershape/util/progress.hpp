#pragma once
// "round i of R, ~N s left" on stderr, for the engine's on_round and the calibration's fits. The
// time left is wall time, measured here from the first report (a simulated device's own seconds
// say nothing about how long the user waits). On a terminal the line is rewritten in place; in a
// log file each report is its own line, at most one every 10 s and the last, so no \r piles up.
// on_terminal_only: nothing at all unless stderr is a terminal.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

namespace powershape::util {

// `what` names the unit counted: "round", "simulation".
inline std::function<void(int, int, double)> progress_line(std::string what,
                                                           bool on_terminal_only) {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  if (on_terminal_only && !terminal) return {};
  using Clock = std::chrono::steady_clock;
  struct State {
    Clock::time_point start = Clock::now(), last_line{};
  };
  auto state = std::make_shared<State>();
  return [what, terminal, state](int done, int total, double) {
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - state->start).count();
    const double left = done > 0 ? elapsed / done * (total - done) : 0;
    if (terminal) {
      std::fprintf(stderr, "\rpowershape: %s %d of %d, ~%.0f s left   ", what.c_str(), done, total,
                   left);
      if (done == total) std::fputc('\n', stderr);
      return;
    }
    if (done != total && now - state->last_line < std::chrono::seconds(10)) return;
    state->last_line = now;
    std::fprintf(stderr, "powershape: %s %d of %d, ~%.0f s left\n", what.c_str(), done, total,
                 left);
  };
}

inline std::function<void(int, int, double)> round_progress(bool on_terminal_only) {
  return progress_line("round", on_terminal_only);
}

}  // namespace powershape::util
