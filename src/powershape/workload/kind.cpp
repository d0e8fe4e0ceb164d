#include "powershape/workload/kind.hpp"

#include "powershape/util/error.hpp"

namespace powershape::workload {

WorkloadStep step_of(int code, Phase p) {
  WorkloadStep s;
  s.code = code;
  s.phases.push_back(std::move(p));
  return s;
}

std::string dims_name(int64_t a, int64_t b, int64_t c) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c);
}

void require(bool ok, const std::string& what) {
  if (!ok) throw invalid_input(what);
}

}  // namespace powershape::workload
