#include "powershape/workload/kinds/products/products.hpp"

namespace powershape::workload {

std::string Products::name(int) const { return "products " + std::to_string(size) + "^3"; }

void Products::check(int) const { require(size > 0, "products: the size must be positive"); }

void Products::steps(int, const Rates&, const StepFn& f) const {
  const double s = static_cast<double>(size);
  WorkloadStep p = step_of(kProduct, product("product", s, s, s), size, size, size);
  p.phases.front().efficiency = 1;  // the size profiles are fitted to
  f(p);
}

}  // namespace powershape::workload
