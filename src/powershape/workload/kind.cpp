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

std::string sized_name(const std::string& words, const Sizes& sizes, int chunks) {
  std::string out = words;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    out += (i == 0 ? " " : "x") + std::to_string(sizes[i]);
  return out + " chunks=" + std::to_string(chunks);
}

bool sizes_alone(const NameParts& p, std::size_t count) {
  return p.words.empty() && p.options.empty() && p.dims.size() == count;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw invalid_input(what);
}

}  // namespace powershape::workload
