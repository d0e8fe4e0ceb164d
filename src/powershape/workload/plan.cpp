#include "powershape/workload/plan.hpp"

namespace powershape::workload {

double Plan::total_flops() const {
  double f = 0;
  for (const auto& p : phases) f += p.flops;
  return f;
}

std::string to_string(PhaseKind k) {
  switch (k) {
    case PhaseKind::kCompute:
      return "compute";
    case PhaseKind::kMemory:
      return "memory";
    case PhaseKind::kIdle:
      return "idle";
  }
  return "compute";
}

}  // namespace powershape::workload
