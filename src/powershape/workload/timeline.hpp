#pragma once
#include <istream>
#include <string>

#include "powershape/workload/plan.hpp"

namespace powershape::workload {

// A recorded kernel timeline as a plan: one row per kernel with its start, duration and name, as
// Nsight Systems exports it (`nsys stats --report cuda_gpu_trace --format csv`: columns
// "Start (ns)", "Duration (ns)", "Name") or as `start_ns,duration_ns,name`. A kernel whose name
// says it is a matrix product (gemm, gmma, mma, matmul, cutlass, xmma) becomes a compute phase, any
// other a memory-bound phase; each gets the work it did in its recorded time at the rates the
// recording GPU had (`flops_per_s`, `bytes_per_s`); gaps between kernels become idle phases.
// Throws std::runtime_error naming the file, line and column of a malformed row.
Plan plan_from_timeline(std::istream& in, const std::string& name, double flops_per_s,
                        double bytes_per_s);
Plan read_timeline(const std::string& path, double flops_per_s, double bytes_per_s);

}  // namespace powershape::workload
