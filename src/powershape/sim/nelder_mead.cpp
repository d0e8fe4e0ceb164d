#include "powershape/sim/nelder_mead.hpp"

#include <algorithm>
#include <numeric>

namespace powershape::sim {

std::vector<double> nelder_mead(const std::function<double(const std::vector<double>&)>& f,
                                std::vector<double> x0, const std::vector<double>& step,
                                int max_evals, double tol, int* evals) {
  const std::size_t n = x0.size();
  std::vector<std::vector<double>> pts(n + 1, x0);
  for (std::size_t i = 0; i < n; ++i) pts[i + 1][i] += step[i];
  std::vector<double> vals(n + 1);
  int count = 0;
  auto eval = [&](const std::vector<double>& x) {
    ++count;
    return f(x);
  };
  for (std::size_t i = 0; i <= n; ++i) vals[i] = eval(pts[i]);
  std::vector<std::size_t> order(n + 1);
  while (count < max_evals) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return vals[a] < vals[b]; });
    const std::size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (vals[worst] - vals[best] <= tol) break;
    std::vector<double> centroid(n, 0.0);
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t i = 0; i < n; ++i) centroid[i] += pts[order[k]][i] / static_cast<double>(n);
    }
    auto along = [&](double t) {
      std::vector<double> x(n);
      for (std::size_t i = 0; i < n; ++i) x[i] = centroid[i] + t * (pts[worst][i] - centroid[i]);
      return x;
    };
    auto refl = along(-1);
    double fr = eval(refl);
    if (fr < vals[best]) {
      auto exp = along(-2);
      double fe = eval(exp);
      if (fe < fr) {
        pts[worst] = exp, vals[worst] = fe;
      } else {
        pts[worst] = refl, vals[worst] = fr;
      }
    } else if (fr < vals[second]) {
      pts[worst] = refl, vals[worst] = fr;
    } else {
      auto con = along(fr < vals[worst] ? -0.5 : 0.5);
      double fc = eval(con);
      if (fc < std::min(fr, vals[worst])) {
        pts[worst] = con, vals[worst] = fc;
      } else {  // shrink towards the best
        for (std::size_t k = 0; k <= n; ++k) {
          if (k == best) continue;
          for (std::size_t i = 0; i < n; ++i)
            pts[k][i] = pts[best][i] + 0.5 * (pts[k][i] - pts[best][i]);
          vals[k] = eval(pts[k]);
        }
      }
    }
  }
  if (evals != nullptr) *evals = count;
  auto it = std::min_element(vals.begin(), vals.end());
  return pts[static_cast<std::size_t>(it - vals.begin())];
}

}  // namespace powershape::sim
