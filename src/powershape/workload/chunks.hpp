#pragma once
// How rows are split into chunks, for every place that chunks (plans, the GPU's kernels, the LM
// head op): ceil(rows / chunks) rows a chunk, the last one ragged.
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "powershape/util/error.hpp"

namespace powershape::workload {

inline int64_t rows_per_chunk(int64_t rows, int64_t chunks) {
  if (rows < 1 || chunks < 1) throw invalid_input("rows and chunks must be positive");
  return (rows + chunks - 1) / chunks;
}

// Calls f(chunk index, first row, rows) for each chunk of `per` rows.
template <class F>
void for_each_chunk(int64_t rows, int64_t per, F&& f) {
  int64_t c = 0;
  for (int64_t row0 = 0; row0 < rows; row0 += per, ++c) f(c, row0, std::min(per, rows - row0));
}

}  // namespace powershape::workload
