#include "powershape/workload/kinds/moe/moe.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"

namespace powershape::workload {

std::optional<Moe> Moe::from_args(const WorkloadArgs&, const Sizes& s) {
  return Moe{s[0], s[1], s[2], s[3], s[4]};
}

std::optional<Moe> Moe::from_name(const NameParts& p) {
  if (!sizes_alone(p, 5)) return std::nullopt;
  return Moe{p.dims[0], p.dims[1], p.dims[2], p.dims[3], p.dims[4]};
}

std::vector<Moe> Moe::examples() { return {Moe{64, 64, 4, 2, 128}}; }

std::string Moe::name(int chunks) const {
  return sized_name(kName, {tokens, width, experts, top_k, ffn}, chunks);
}

void Moe::check(int chunks) const {
  require(tokens > 0 && width > 0 && experts > 0 && top_k > 0 && ffn > 0,
          "moe: tokens, D, experts, top-k and FFN must be positive");
  require(experts <= 512 && top_k <= 16 && top_k <= experts,
          "moe: at most 512 experts, and a top-k of at most 16 and at most the experts");
  require(chunks >= 1 && chunks <= tokens, "moe: chunks must be between 1 and the tokens");
}

void Moe::steps(int chunks, const Rates&, const StepFn& f) const {
  const double d = static_cast<double>(width), e = static_cast<double>(experts),
               k = static_cast<double>(top_k), ff = static_cast<double>(ffn);
  for_each_chunk(tokens, rows_per_chunk(tokens, chunks), [&](int64_t, int64_t row0, int64_t r) {
    const int64_t cap = capacity(r);
    const double rr = static_cast<double>(r), rows = e * static_cast<double>(cap);
    const auto step = [&](Kernel code, Phase p, int64_t m, int64_t n, int64_t kk, int64_t batch) {
      f(step_of(code, std::move(p), m, n, kk, row0, batch));
    };
    // The router's logits in fp32, each token's experts chosen and dispatched: the logits read,
    // each choice's expert, weight and slot written, every choice read again by each expert's scan,
    // and the experts' slot tables written.
    Phase router = product("router", rr, e, d, 4);
    step(kRouter, router, r, experts, width, 1);
    step(kRoute, stream("route", 4 * rr * e + 12 * rr * k + 4 * rr * k * e + 8 * rows), r, experts,
         0, 1);
    step(kGather, stream("gather", 2 * rows * d * 2), cap, width, 0, experts);
    step(kUp, batched_product("up", experts, cap, 2 * ffn, width), cap, 2 * ffn, width, experts);
    step(kSwiglu, stream("swiglu", rows * 3 * ff * 2), cap, ffn, 0, experts);
    step(kDown, batched_product("down", experts, cap, width, ffn), cap, width, ffn, experts);
    step(kCombine, stream("combine", rr * k * d * 2 + rr * d * 2 + rr * k * 8), r, width, 0, 1);
  });
}

std::vector<double> moe_layer(const Moe& m, int chunks, const std::vector<float>& x,
                              const std::vector<float>& router, const std::vector<float>& w1,
                              const std::vector<float>& w2) {
  m.check(chunks);
  const auto n = static_cast<std::size_t>(m.tokens), d = static_cast<std::size_t>(m.width),
             e = static_cast<std::size_t>(m.experts), f = static_cast<std::size_t>(m.ffn),
             k = static_cast<std::size_t>(m.top_k);
  if (x.size() != n * d || router.size() != e * d || w1.size() != e * 2 * f * d ||
      w2.size() != e * d * f)
    throw invalid_input(
        "moe_layer: x, router, w1 and w2 must hold N x D, E x D, E x 2F x D and "
        "E x D x F values");
  std::vector<double> out(n * d);
  for_each_chunk(m.tokens, rows_per_chunk(m.tokens, chunks), [&](int64_t, int64_t row0, int64_t r) {
    std::vector<int64_t> taken(e);  // each expert's slots filled, in token order
    const auto cap = m.capacity(r);
    for (auto t = static_cast<std::size_t>(row0); t < static_cast<std::size_t>(row0 + r); ++t) {
      std::vector<double> logit(e);
      for (std::size_t j = 0; j < e; ++j)
        for (std::size_t i = 0; i < d; ++i) logit[j] += double(x[t * d + i]) * router[j * d + i];
      std::vector<std::size_t> order(e);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return logit[a] > logit[b]; });
      double sum = 0;
      for (std::size_t c = 0; c < k; ++c) sum += std::exp(logit[order[c]] - logit[order[0]]);
      for (std::size_t c = 0; c < k; ++c) {
        const std::size_t ex = order[c];
        if (taken[ex]++ >= cap) continue;  // past the expert's capacity: dropped
        const double weight = std::exp(logit[ex] - logit[order[0]]) / sum;
        std::vector<double> act(f);
        for (std::size_t o = 0; o < f; ++o) {
          double gate = 0, up = 0;
          for (std::size_t i = 0; i < d; ++i) {
            gate += double(w1[(ex * 2 * f + o) * d + i]) * x[t * d + i];
            up += double(w1[(ex * 2 * f + f + o) * d + i]) * x[t * d + i];
          }
          act[o] = gate / (1 + std::exp(-gate)) * up;
        }
        for (std::size_t i = 0; i < d; ++i) {
          double y = 0;
          for (std::size_t o = 0; o < f; ++o) y += double(w2[(ex * d + i) * f + o]) * act[o];
          out[t * d + i] += weight * y;
        }
      }
    }
  });
  return out;
}

}  // namespace powershape::workload
