#pragma once
// A workload as the command line describes it (WorkloadArgs, kind.hpp), and the plans it makes.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/workload/builders.hpp"
#include "powershape/workload/kind.hpp"

namespace powershape::workload {

// "4096,896,151936" -> `count` positive integers; an Error whose subject is "shape", naming
// `what` they are, otherwise.
Sizes parse_sizes(const std::string& s, std::size_t count, const std::string& what);
// Three of them.
std::array<int64_t, 3> parse_shape(const std::string& s);
// The chunk counts `chunks` lists, each at least 1 (an Error whose subject is "chunks" otherwise).
std::vector<int> chunk_counts(const WorkloadArgs& a);
// The workload the options describe, with `chunks` row chunks (Custom for a file).
Workload describe(const WorkloadArgs& a, int chunks);
// The plan the options describe at `chunks`; square waves and kernel timelines are sized with the
// device's unthrottled rates. Throws std::runtime_error with a one-line reason.
Plan build_plan(const WorkloadArgs& a, int chunks, const Rates& device);
// One plan per chunk count --chunks lists.
std::vector<Plan> build_plans(const WorkloadArgs& a, const Rates& device);
// Whether the workload is a fine-tune (finetune:MODEL); otherwise it must name a chunked kind
// (repro and tune compare chunk counts): an Error naming the kinds that are, for any other.
bool chunked_or_finetune(const WorkloadArgs& a);

}  // namespace powershape::workload
