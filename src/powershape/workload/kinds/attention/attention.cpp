#include "powershape/workload/kinds/attention/attention.hpp"

#include <algorithm>
#include <cmath>

#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"

namespace powershape::workload {
std::optional<Attention> Attention::from_args(const WorkloadArgs&, const Sizes& s) {
  return Attention{s[0], s[1], s[2]};
}

std::optional<Attention> Attention::from_name(const NameParts& p) {
  if (!sizes_alone(p, 3)) return std::nullopt;
  return Attention{p.dims[0], p.dims[1], p.dims[2]};
}

std::vector<Attention> Attention::examples() { return {Attention{256, 2, 64}}; }

std::string Attention::name(int chunks) const {
  return sized_name(kName, {seq, heads, head_dim}, chunks);
}

void Attention::check(int chunks) const {
  require(seq > 0 && heads > 0 && head_dim > 0,
          "attention: the sequence, heads and head size must be positive");
  require(heads <= 1024 && head_dim <= 1024,
          "attention: at most 1024 heads of at most 1024 values each");
  require(chunks >= 1 && chunks <= seq, "attention: chunks must be between 1 and the sequence");
}

void Attention::steps(int chunks, const Rates&, const StepFn& f) const {
  for_each_chunk(seq, rows_per_chunk(seq, chunks), [&](int64_t, int64_t row0, int64_t r) {
    const int64_t keys = row0 + r;  // causal: the keys up to the chunk's last query
    f(step_of(kQk, batched_product("qk", heads, r, keys, head_dim), r, keys, head_dim, row0,
              heads));
    // Every head's rows, each read three times over its keys (masked ones too) and written.
    f(step_of(kSoftmax, softmax_rows_phase("softmax", heads * r, keys), r, keys, 0, row0, heads));
    f(step_of(kPv, batched_product("pv", heads, r, head_dim, keys), r, head_dim, keys, row0,
              heads));
  });
}

std::vector<double> causal_attention(const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, int64_t seq, int64_t heads,
                                     int64_t d) {
  const auto n = static_cast<std::size_t>(seq * heads * d);
  if (seq < 1 || heads < 1 || d < 1 || q.size() != n || k.size() != n || v.size() != n)
    throw invalid_input("causal_attention: Q, K and V must each hold seq x heads x d values");
  const auto at = [&](int64_t t, int64_t h) {
    return static_cast<std::size_t>((t * heads + h) * d);
  };
  const double scale = 1 / std::sqrt(static_cast<double>(d));
  std::vector<double> o(n), score(static_cast<std::size_t>(seq));
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t t = 0; t < seq; ++t) {
      double top = -INFINITY;
      for (int64_t s = 0; s <= t; ++s) {
        double dot = 0;
        for (int64_t i = 0; i < d; ++i) dot += double(q[at(t, h) + i]) * double(k[at(s, h) + i]);
        score[static_cast<std::size_t>(s)] = dot * scale;
        top = std::max(top, dot * scale);
      }
      double sum = 0;
      for (int64_t s = 0; s <= t; ++s) sum += std::exp(score[static_cast<std::size_t>(s)] - top);
      for (int64_t s = 0; s <= t; ++s) {
        const double p = std::exp(score[static_cast<std::size_t>(s)] - top) / sum;
        for (int64_t i = 0; i < d; ++i) o[at(t, h) + i] += p * double(v[at(s, h) + i]);
      }
    }
  }
  return o;
}

}  // namespace powershape::workload
