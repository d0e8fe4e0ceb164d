#pragma once
// "round i of R, ~N s left" on one line of stderr, rewritten in place, for the engine's on_round.
// on_terminal_only: print nothing unless stderr is a terminal (a log file gets no \r clutter).
#include <unistd.h>

#include <cstdio>
#include <functional>

namespace powershape::cli {

inline std::function<void(int, int, double)> round_progress(bool on_terminal_only) {
  if (on_terminal_only && isatty(STDERR_FILENO) == 0) return {};
  return [](int round, int rounds, double seconds) {
    const double left = seconds / round * (rounds - round);
    std::fprintf(stderr, "\rpowershape: round %d of %d, ~%.0f s left   ", round, rounds, left);
    if (round == rounds) std::fputc('\n', stderr);
  };
}

}  // namespace powershape::cli
