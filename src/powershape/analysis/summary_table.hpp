#pragma once
#include <cstdio>
#include <string>
#include <vector>

#include "powershape/analysis/summary.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::analysis {

// Prints summaries in the manner of `perf stat`: one block per GPU, then one per region. A region
// seen more often than a few times is shown once more as a median, with where its every instance
// is kept (`kept_in`: "--json", "the JSON summary") said.
void print_summaries(std::FILE* out, const std::string& title, const trace::Trace& trace,
                     const std::vector<analysis::Summary>& summaries, const std::string& kept_in);

}  // namespace powershape::analysis
