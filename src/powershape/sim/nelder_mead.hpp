#pragma once
#include <functional>
#include <vector>

namespace powershape::sim {

// Minimises f from x0 with the Nelder-Mead simplex (initial steps `step`, per coordinate) until
// the simplex's values agree within `tol` or `max_evals` evaluations. Returns the best point.
std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> x0, const std::vector<double>& step,
                                int max_evals, double tol, int* evals = nullptr);

}  // namespace powershape::sim
