#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "powershape/analysis/summary.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::cli {

// Prints summaries in the manner of `perf stat`: one block per GPU, then one per region.
void print_summaries(std::FILE* out, const std::string& title, const trace::Trace& trace,
                     const std::vector<analysis::Summary>& summaries);

}  // namespace powershape::cli
