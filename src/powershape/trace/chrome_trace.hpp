#pragma once
// A trace in the Chrome trace event format, which Perfetto (ui.perfetto.dev) and chrome://tracing
// open: one process per GPU with a counter track per signal (powers in W, energy in J, the rest in
// their units), regions as slices (those over every GPU in a "regions" process), events as
// instants. Timestamps are microseconds of the wall clock (UTC) when the trace has its anchor
// (Trace::wall_minus_steady_ns), so that it lines up with torch.profiler's and Nsight Systems'
// exports; else of the trace's own clock.
#include <nlohmann/json.hpp>
#include <string>

#include "powershape/trace/trace.hpp"

namespace powershape::trace {

nlohmann::json to_chrome_trace(const Trace& t);
// Throws std::runtime_error naming the path when it cannot be written.
void write_chrome_trace(const std::string& path, const Trace& t);

}  // namespace powershape::trace
