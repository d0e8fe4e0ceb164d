#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/workload/phase.hpp"
#include "powershape/workload/workload.hpp"

namespace powershape::workload {

// One iteration of a workload: the phases in the order the GPU runs them, and the workload they
// were derived from (Custom for a plan read from a file), so that a GPU can run the real kernels.
struct Plan {
  std::string name;
  std::vector<Phase> phases;
  Workload workload;
  double total_flops() const;
};

}  // namespace powershape::workload
