#pragma once
#include <optional>

#include "powershape/trace/trace.hpp"

namespace powershape::analysis {

// How long the power manager took to act on a load step: the time from the first instantaneous
// power reading over `load_mw` (at or after from_ns) to the first reported SM clock under
// `clock_mhz` after it, in ms; with load_mw 0 the step is at from_ns itself (a caller that knows
// when it started the load). Empty when the trace shows no such step or no such drop.
std::optional<double> step_response_ms(const trace::Trace& t, int gpu, int64_t load_mw,
                                       int64_t clock_mhz, int64_t from_ns = 0);

}  // namespace powershape::analysis
