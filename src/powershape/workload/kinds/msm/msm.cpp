#include "powershape/workload/kinds/msm/msm.hpp"

#include "powershape/workload/chunks.hpp"

namespace powershape::workload {

std::optional<Msm> Msm::from_args(const WorkloadArgs&, const Sizes& s) {
  return Msm{s[0], s[1], s[2]};
}

std::optional<Msm> Msm::from_name(const NameParts& p) {
  if (!p.words.empty() || !p.options.empty() || p.dims.size() != 3) return std::nullopt;
  return Msm{p.dims[0], p.dims[1], p.dims[2]};
}

std::vector<Msm> Msm::examples() { return {Msm{64, 64, 256}}; }

std::string Msm::name(int chunks) const {
  return "msm " + dims_name(rows, width, cols) + " chunks=" + std::to_string(chunks);
}

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

}  // namespace powershape::workload
