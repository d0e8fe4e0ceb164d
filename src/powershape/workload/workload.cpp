#include "powershape/workload/workload.hpp"

#include <cstdio>

namespace powershape::workload {
namespace {

std::string dims(int64_t a, int64_t b, int64_t c) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c);
}

}  // namespace

std::string name_of(const Workload& w) {
  const std::string chunks = " chunks=" + std::to_string(w.chunks);
  if (const auto* l = std::get_if<LmHead>(&w.kind)) {
    return (l->products_only ? "lmhead products " : "lmhead ") +
           dims(l->tokens, l->width, l->vocab) + (l->products_only ? "" : chunks);
  }
  if (const auto* m = std::get_if<Msm>(&w.kind))
    return "msm " + dims(m->rows, m->width, m->cols) + chunks;
  if (const auto* s = std::get_if<Square>(&w.kind)) {
    return "square " + std::to_string(s->period_ms) + " ms duty " + std::to_string(s->duty);
  }
  if (const auto* p = std::get_if<Products>(&w.kind))
    return "products " + std::to_string(p->size) + "^3";
  return "custom";
}

}  // namespace powershape::workload
