#pragma once
// "round i of R, ~N s left" on one line of stderr, rewritten in place, for the engine's on_round
// and the calibration's fits. on_terminal_only: print nothing unless stderr is a terminal (a log
// file gets no \r clutter).
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

namespace powershape::cli {

// `what` names the unit counted: "round", "simulation".
inline std::function<void(int, int, double)> progress_line(std::string what,
                                                           bool on_terminal_only) {
  if (on_terminal_only && isatty(STDERR_FILENO) == 0) return {};
  return [what](int done, int total, double seconds) {
    const double left = seconds / done * (total - done);
    std::fprintf(stderr, "\rpowershape: %s %d of %d, ~%.0f s left   ", what.c_str(), done, total,
                 left);
    if (done == total) std::fputc('\n', stderr);
  };
}

inline std::function<void(int, int, double)> round_progress(bool on_terminal_only) {
  return progress_line("round", on_terminal_only);
}

}  // namespace powershape::cli
