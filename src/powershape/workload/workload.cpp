#include "powershape/workload/workload.hpp"

#include <cstdlib>
#include <sstream>

namespace powershape::workload {
namespace {

std::string dims(int64_t a, int64_t b, int64_t c) {
  return std::to_string(a) + "x" + std::to_string(b) + "x" + std::to_string(c);
}

}  // namespace

std::string name_of(const Workload& w) {
  const std::string chunks = " chunks=" + std::to_string(w.chunks);
  if (const auto* l = std::get_if<LmHead>(&w.kind)) {
    // How dW is kept and where the exponent is taken follow the chunk count. A name without them
    // is the op as it was before either existed (an fp32 dW, a pass of its own): recorded data
    // keeps its meaning.
    const std::string how =
        std::string(l->dw_bytes == 2 ? " dw=bf16" : "") + (l->exp_in_product ? " exp=product" : "");
    if (l->products_only)
      return "lmhead products " + dims(l->tokens, l->width, l->vocab) + chunks + how;
    return (l->backward ? "lmhead " : "lmhead forward ") + dims(l->tokens, l->width, l->vocab) +
           chunks + how;
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

std::optional<Workload> workload_named(const std::string& name) {
  std::istringstream in(name);
  std::string kind, dims, chunks;
  in >> kind >> dims;
  const bool forward = kind == "lmhead" && dims == "forward";
  const bool products = kind == "lmhead" && dims == "products";
  if (forward || products) in >> dims;
  in >> chunks;
  int64_t a = 0, b = 0, c = 0;
  char x1 = 0, x2 = 0;
  std::istringstream ds(dims);
  if (!(ds >> a >> x1 >> b >> x2 >> c) || x1 != 'x' || x2 != 'x' || a <= 0 || b <= 0 || c <= 0 ||
      a > 1'000'000'000 || b > 1'000'000'000 || c > 1'000'000'000 ||
      chunks.rfind("chunks=", 0) != 0)
    return std::nullopt;
  const int n = std::atoi(chunks.c_str() + 7);
  if (n < 1 || n > 65536) return std::nullopt;
  if (kind == "lmhead" && n <= a) {
    LmHead l{a, b, c, !forward};
    l.products_only = products;
    l.dw_bytes = 4;
    for (std::string how; in >> how;) {
      if (how == "dw=bf16") {
        l.dw_bytes = 2;
      } else if (how == "exp=product") {
        l.exp_in_product = true;
      } else {
        return std::nullopt;
      }
    }
    return Workload{l, n};
  }
  if (kind == "msm" && n <= a) return Workload{Msm{a, b, c}, n};
  return std::nullopt;
}

}  // namespace powershape::workload
