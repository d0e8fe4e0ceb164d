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
  // The dW dtype and where the exponent is taken follow the chunk count; a name without them is
  // the op as recorded before either existed (an fp32 dW, a pass of its own): recorded data
  // keeps its meaning.
  const auto dtype = [](double dw_bytes) { return std::string(dw_bytes == 2 ? " dw=bf16" : ""); };
  if (const auto* l = std::get_if<LmHead>(&w.kind))
    return (l->backward ? "lmhead " : "lmhead forward ") + dims(l->tokens, l->width, l->vocab) +
           chunks + dtype(l->dw_bytes) + (l->exp_in_product ? " exp=product" : "");
  if (const auto* l = std::get_if<LmHeadProducts>(&w.kind))
    return "lmhead products " + dims(l->tokens, l->width, l->vocab) + chunks + dtype(l->dw_bytes);
  if (const auto* m = std::get_if<Msm>(&w.kind))
    return "msm " + dims(m->rows, m->width, m->cols) + chunks;
  if (const auto* s = std::get_if<Square>(&w.kind)) {
    return "square " + std::to_string(s->period_ms) + " ms duty " + std::to_string(s->duty);
  }
  if (const auto* p = std::get_if<Products>(&w.kind))
    return "products " + std::to_string(p->size) + "^3";
  return "custom";
}

std::string kind_name_of(const Workload& w) {
  std::string name = name_of(w);
  const std::string chunks = " chunks=" + std::to_string(w.chunks);
  if (const auto at = name.find(chunks); at != std::string::npos) name.erase(at, chunks.size());
  return name;
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
    double dw_bytes = 4;
    bool exp_in_product = false;
    for (std::string how; in >> how;) {
      if (how == "dw=bf16") {
        dw_bytes = 2;
      } else if (how == "exp=product" && !products) {
        exp_in_product = true;
      } else {
        return std::nullopt;
      }
    }
    if (products) return Workload{LmHeadProducts{a, b, c, dw_bytes}, n};
    LmHead l{a, b, c, !forward};
    l.dw_bytes = dw_bytes;
    l.exp_in_product = exp_in_product;
    return Workload{l, n};
  }
  if (kind == "msm" && n <= a) return Workload{Msm{a, b, c}, n};
  return std::nullopt;
}

}  // namespace powershape::workload
