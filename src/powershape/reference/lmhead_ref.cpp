#include "powershape/reference/lmhead_ref.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::reference {

LmHeadResult lmhead_reference(const std::vector<double>& x, const std::vector<double>& w,
                              const std::vector<int64_t>& targets, int64_t n, int64_t d, int64_t v,
                              const LmHeadOptions& o) {
  if (static_cast<int64_t>(x.size()) != n * d || static_cast<int64_t>(w.size()) != v * d ||
      static_cast<int64_t>(targets.size()) != n) {
    throw invalid_input("lmhead_reference: sizes do not match N, D, V");
  }
  const bool bias = !o.bias.empty();
  if ((bias && static_cast<int64_t>(o.bias.size()) != v) ||
      (!o.token_grad.empty() && static_cast<int64_t>(o.token_grad.size()) != n)) {
    throw invalid_input("lmhead_reference: bias must have V and token_grad N entries");
  }
  LmHeadResult r;
  r.token_loss.assign(static_cast<std::size_t>(n), 0);
  r.lse.assign(static_cast<std::size_t>(n), 0);
  r.dx.assign(static_cast<std::size_t>(n * d), 0);
  r.dw.assign(static_cast<std::size_t>(v * d), 0);
  if (bias) r.dbias.assign(static_cast<std::size_t>(v), 0);
  int64_t valid = 0;
  for (int64_t t : targets) valid += t != o.ignore_index;
  const double scale =
      o.grad_scale * (o.reduction == Reduction::kMean ? 1.0 / std::max<int64_t>(valid, 1) : 1.0);
  const double eps = o.label_smoothing;
  std::vector<double> z(static_cast<std::size_t>(v)), dz(static_cast<std::size_t>(v));
  double zsum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double m = -INFINITY;
    for (int64_t j = 0; j < v; ++j) {
      double logit = 0;
      for (int64_t k = 0; k < d; ++k)
        logit += x[static_cast<std::size_t>(i * d + k)] * w[static_cast<std::size_t>(j * d + k)];
      if (bias) logit += o.bias[static_cast<std::size_t>(j)];
      z[static_cast<std::size_t>(j)] =
          o.softcap > 0 ? o.softcap * std::tanh(logit / o.softcap) : logit;
      m = std::max(m, z[static_cast<std::size_t>(j)]);
    }
    double s = 0, sum_z = 0;
    for (int64_t j = 0; j < v; ++j) {
      s += std::exp(z[static_cast<std::size_t>(j)] - m);
      sum_z += z[static_cast<std::size_t>(j)];
    }
    const double lse = m + std::log(s);
    r.lse[static_cast<std::size_t>(i)] = lse;
    const int64_t t = targets[static_cast<std::size_t>(i)];
    if (t == o.ignore_index) continue;
    if (t < 0 || t >= v) throw invalid_input("lmhead_reference: target out of range");
    const double zl = o.z_loss * lse * lse;
    // The smoothing term only when there is smoothing: a column masked by a -inf bias makes
    // sum_z -inf, and 0 x inf is NaN.
    const double smooth = eps > 0 ? eps * (lse - sum_z / static_cast<double>(v)) : 0;
    r.token_loss[static_cast<std::size_t>(i)] =
        (1 - eps) * (lse - z[static_cast<std::size_t>(t)]) + smooth + zl;
    zsum += zl;
    const double token_scale =
        scale * (o.token_grad.empty() ? 1.0 : o.token_grad[static_cast<std::size_t>(i)]);
    for (int64_t j = 0; j < v; ++j) {
      const double p = std::exp(z[static_cast<std::size_t>(j)] - lse);
      double g =
          p * (1 + 2 * o.z_loss * lse) - eps / static_cast<double>(v) - (j == t ? 1 - eps : 0);
      if (o.softcap > 0) {
        const double c = z[static_cast<std::size_t>(j)] / o.softcap;
        g *= 1 - c * c;  // d(cap tanh(x / cap)) / dx
      }
      dz[static_cast<std::size_t>(j)] = g * token_scale;
    }
    for (int64_t j = 0; j < v; ++j) {
      const double g = dz[static_cast<std::size_t>(j)];
      if (bias) r.dbias[static_cast<std::size_t>(j)] += g;
      for (int64_t k = 0; k < d; ++k) {
        r.dx[static_cast<std::size_t>(i * d + k)] += g * w[static_cast<std::size_t>(j * d + k)];
        r.dw[static_cast<std::size_t>(j * d + k)] += g * x[static_cast<std::size_t>(i * d + k)];
      }
    }
  }
  double total = 0;
  for (double l : r.token_loss) total += l;
  const double div =
      o.reduction == Reduction::kMean ? static_cast<double>(std::max<int64_t>(valid, 1)) : 1.0;
  r.loss = total / div;
  r.z_loss = zsum / div;
  return r;
}

}  // namespace powershape::reference
