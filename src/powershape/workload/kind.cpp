#include "powershape/workload/kind.hpp"

#include "powershape/util/error.hpp"

namespace powershape::workload {

WorkloadStep step_of(int code, Phase p, int64_t m, int64_t n, int64_t k, int64_t row0,
                     int64_t batch) {
  WorkloadStep s;
  s.code = code;
  s.m = m, s.n = n, s.k = k, s.row0 = row0, s.batch = batch;
  s.phases.push_back(std::move(p));
  return s;
}

std::string dims_name(const Sizes& s) {
  std::string out;
  for (auto v : s) out += (out.empty() ? "" : "x") + std::to_string(v);
  return out;
}

std::string dims_name(int64_t a, int64_t b, int64_t c) { return dims_name(Sizes{a, b, c}); }

void require(bool ok, const std::string& what) {
  if (!ok) throw invalid_input(what);
}

}  // namespace powershape::workload
