#pragma once
// A recording named as the docs name it, from any folder: `fake:h200/gemm_sustained` is the
// installed data/h200/gemm_sustained_trace.csv (util::share_dir()), so that an installed
// powershape replays what it ships.
#include <string>

namespace powershape::trace {

// `name` itself where it is a file; else share_dir()/data/NAME, NAME.csv or NAME_trace.csv,
// the first that is a file; else `name` (its reader then says it cannot read it).
std::string recording_path(const std::string& name);

// The recordings shipped, as names recording_path takes ("h200/gemm_sustained", ...), sorted.
std::string recording_names();

}  // namespace powershape::trace
