#include "powershape/workload/kinds/msm/msm.hpp"

#include <algorithm>
#include <cmath>

#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"

namespace powershape::workload {

std::optional<Msm> Msm::from_args(const WorkloadArgs&, const Sizes& s) {
  return Msm{s[0], s[1], s[2]};
}

std::optional<Msm> Msm::from_name(const NameParts& p) {
  if (!sizes_alone(p, 3)) return std::nullopt;
  return Msm{p.dims[0], p.dims[1], p.dims[2]};
}

std::vector<Msm> Msm::examples() { return {Msm{64, 64, 256}}; }

std::string Msm::name(int chunks) const { return sized_name(kName, {rows, width, cols}, chunks); }

void Msm::check(int chunks) const {
  require(rows > 0 && width > 0 && cols > 0, "msm: rows, d and cols must be positive");
  require(chunks >= 1 && chunks <= rows, "msm: chunks must be between 1 and rows");
}

void Msm::steps(int chunks, const Rates&, const StepFn& f) const {
  const double d = static_cast<double>(width), c = static_cast<double>(cols);
  for_each_chunk(rows, rows_per_chunk(rows, chunks), [&](int64_t, int64_t row0, int64_t r) {
    const double rr = static_cast<double>(r);
    f(step_of(kQk, product("qk", rr, c, d), r, cols, width, row0));
    f(step_of(kSoftmax, softmax_rows_phase("softmax", r, cols), r, cols, 0, row0));
    f(step_of(kPv, product("pv", rr, d, c), r, width, cols, row0));
  });
}

std::vector<double> msm_reference(const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v, int64_t rows, int64_t width,
                                  int64_t cols) {
  const auto r = static_cast<std::size_t>(rows), d = static_cast<std::size_t>(width),
             c = static_cast<std::size_t>(cols);
  if (rows < 1 || width < 1 || cols < 1 || q.size() != r * d || k.size() != c * d ||
      v.size() != c * d)
    throw invalid_input("msm_reference: Q must hold rows x d values, K and V cols x d");
  std::vector<double> o(r * d), s(c);
  for (std::size_t i = 0; i < r; ++i) {
    double top = -INFINITY;
    for (std::size_t j = 0; j < c; ++j) {
      s[j] = 0;
      for (std::size_t x = 0; x < d; ++x) s[j] += double(q[i * d + x]) * k[j * d + x];
      top = std::max(top, s[j]);
    }
    double sum = 0;
    for (std::size_t j = 0; j < c; ++j) sum += s[j] = std::exp(s[j] - top);
    for (std::size_t j = 0; j < c; ++j)
      for (std::size_t x = 0; x < d; ++x) o[i * d + x] += s[j] / sum * v[j * d + x];
  }
  return o;
}

}  // namespace powershape::workload
