#include "powershape/workload/lmhead_workspace.hpp"

#include <string>

#include "powershape/util/error.hpp"
#include "powershape/workload/lmhead_steps.hpp"
#include "powershape/workload/workload.hpp"

namespace powershape::workload {
namespace {

constexpr std::size_t kAlign = 256;

[[noreturn]] void too_large() {
  throw invalid_input("lmhead: the workspace for these N and V is larger than memory can address");
}

std::size_t mul(std::size_t a, std::size_t b) {
  std::size_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) too_large();
  return r;
}

std::size_t add(std::size_t a, std::size_t b) {
  std::size_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) too_large();
  return r;
}

std::size_t align(std::size_t x) { return add(x, kAlign - 1) / kAlign * kAlign; }

void check_sizes(int64_t n, int64_t d, int64_t v) {
  const auto range = [](const char* what, int64_t x, int64_t most, const char* most_text) {
    if (x < 1 || x > most)
      throw invalid_input(std::string("lmhead: ") + what + " = " + std::to_string(x) +
                          " must be 1 to " + most_text);
  };
  range("N", n, kLmHeadMaxN, "2^40");
  range("D", d, kLmHeadMaxD, "2^20");
  range("V", v, kLmHeadMaxV, "2^31 - 1");
}

}  // namespace

std::size_t lmhead_exp_scratch_bytes(int64_t rows, int64_t v) {
  const auto r = static_cast<std::size_t>(rows);
  return add(mul(2, align(mul(r, 4))),
             align(mul(mul(r, static_cast<std::size_t>(lmhead_exp_tiles(v))), 8)));
}

LmHeadLayout lmhead_layout(int64_t n, int64_t d, int64_t v, const LmHeadOptions& given) {
  check_sizes(n, d, v);
  if (auto why = lmhead_options_problem(given); !why.empty()) throw invalid_input("lmhead: " + why);
  const LmHeadOptions o = lmhead_resolved(given, n, v);
  LmHeadLayout l;
  l.ld = lmhead_row_stride(v);
  l.rows = lmhead_rows_per_chunk(n, o);
  std::size_t off = 0;
  const auto take = [&](std::size_t bytes) {
    const std::size_t at = off;
    off = align(add(off, bytes));
    return at;
  };
  const auto rows = static_cast<std::size_t>(l.rows), tokens = static_cast<std::size_t>(n);
  l.logits = take(mul(mul(rows, static_cast<std::size_t>(l.ld)), 2));
  l.token_loss = take(mul(tokens, 4));
  l.token_zloss = take(mul(tokens, 4));
  l.lse = take(mul(tokens, 4));
  l.row_scale = take(mul(rows, 4));
  l.count = take(sizeof(int));
  // Sized whenever that path may run, so that the size does not depend on the device.
  l.exp_scratch = take(lmhead_one_read(o) && o.fuse_exp ? lmhead_exp_scratch_bytes(l.rows, v) : 0);
  l.total = off;
  return l;
}

}  // namespace powershape::workload
