#include "powershape/workload/plan.hpp"

namespace powershape::workload {

double Plan::total_flops() const {
  double f = 0;
  for (const auto& p : phases) f += p.flops;
  return f;
}

}  // namespace powershape::workload
