#include "powershape/workload/builders.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"

namespace powershape::workload {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw invalid_input(what);
}

Plan start(const Workload& w) {
  Plan plan;
  plan.name = name_of(w);
  plan.workload = w;
  return plan;
}

}  // namespace

Phase product(const std::string& name, double m, double n, double k, double result_bytes,
              bool accumulate) {
  Phase p;
  p.name = name;
  p.kind = PhaseKind::kCompute;
  p.flops = 2 * m * n * k;
  p.bytes = product_bytes(m, n, k, result_bytes, accumulate);
  p.result_bytes = p.bytes - product_bytes(m, n, k, 0, false);
  p.efficiency = product_k_efficiency(k);
  p.m = static_cast<int64_t>(m);
  p.n = static_cast<int64_t>(n);
  p.k = static_cast<int64_t>(k);
  return p;
}

Phase stream(const std::string& name, double bytes) {
  Phase p;
  p.name = name;
  p.kind = PhaseKind::kMemory;
  p.bytes = bytes;
  return p;
}

namespace {

// 128x128 output tiles, times the split of a long k where they are fewer than the SMs.
double product_tiles(double m, double n, double k, double sms) {
  const double tiles = std::ceil(m / 128) * std::ceil(n / 128);
  return tiles < sms ? tiles * std::clamp(std::floor(k / 4096), 1.0, std::ceil(sms / tiles))
                     : tiles;
}

}  // namespace

double product_k_efficiency(double k) { return k / (k + 32); }

double product_fill(double m, double n, double k, double sms) {
  return std::min(1.0, product_tiles(m, n, k, sms) / sms);
}

double product_wave_share(double m, double n, double k, double sms) {
  const double tiles = product_tiles(m, n, k, sms);
  return tiles / (std::ceil(tiles / sms) * sms) / std::min(1.0, tiles / sms);
}

double product_bytes(double m, double n, double k, double result_bytes, bool accumulate) {
  return 2 * k * (m + n) + m * n * result_bytes * (accumulate ? 2 : 1);
}

double SquareSizing::burst_flops() const {
  const double n = static_cast<double>(kBurstSize);
  return 2 * n * n * (n * static_cast<double>(full) + static_cast<double>(last_k));
}

SquareSizing size_square(const Square& s, const Rates& r) {
  require(s.period_ms > 0 && s.period_ms <= 3.6e6,
          "square: the period must be positive and at most an hour (3600000 ms)");
  require(s.duty > 0 && s.duty < 1, "square: the duty must be between 0 and 1");
  require(r.flops_per_s > 0 && r.bytes_per_s > 0, "square: rates must be positive");
  const double n = static_cast<double>(SquareSizing::kBurstSize);
  const double k_step = static_cast<double>(SquareSizing::kStepK);
  const double k_total =
      k_step *
      std::max(1.0, std::round(s.duty * s.period_ms * 1e-3 * r.flops_per_s / (2 * n * n * k_step)));
  SquareSizing z;
  z.full = static_cast<int64_t>(k_total / n);
  z.last_k = static_cast<int64_t>(k_total - static_cast<double>(z.full) * n);
  z.gap_s = (1 - s.duty) * s.period_ms * 1e-3;
  if (s.gap == Gap::kMemory) z.gap_bytes = z.gap_s * r.bytes_per_s;
  return z;
}

Plan lmhead_plan(const LmHead& w, int chunks) {
  require(w.tokens > 0 && w.width > 0 && w.vocab > 0, "lmhead: N, D and V must be positive");
  require(chunks >= 1 && chunks <= w.tokens, "lmhead: chunks must be between 1 and N");
  require(w.ce_bytes_per_logit > 0, "lmhead: bytes per logit must be positive");
  Plan plan = start({w, chunks});
  const double d = static_cast<double>(w.width), v = static_cast<double>(w.vocab);
  if (w.products_only) {
    // A chunk at a time, as the op runs them (dW accumulated in its dtype from the second chunk
    // on), without the pass and the scaling kernels between them.
    for_each_chunk(w.tokens, rows_per_chunk(w.tokens, chunks),
                   [&](int64_t c, int64_t, int64_t rows) {
                     const double n = static_cast<double>(rows);
                     plan.phases.push_back(product("logits", n, v, d));
                     plan.phases.push_back(product("dw", v, d, n, w.dw_bytes, c > 0));
                     plan.phases.push_back(product("dx", n, d, v));
                   });
    return plan;
  }
  // The op's kernels in its order (kernels/lmhead_steps.hpp): the valid targets counted, then a
  // chunk at a time the logits, the pass, and backward X_c scaled by each row's factor (the
  // one-read pass leaves it apart), dW accumulated in its dtype (read and written from the second
  // chunk on), dX_c and its scaling; the per-token losses summed at the end.
  const double tokens = static_cast<double>(w.tokens);
  plan.phases.push_back(stream("count_valid", 4 * tokens));
  for_each_chunk(w.tokens, rows_per_chunk(w.tokens, chunks), [&](int64_t c, int64_t, int64_t rows) {
    const double n = static_cast<double>(rows);
    plan.phases.push_back(product("logits", n, v, d));
    // Forward alone, the pass writes no gradient: it moves the read half of its bytes.
    plan.phases.push_back(
        stream("cross_entropy", (w.backward ? 1 : 0.5) * w.ce_bytes_per_logit * n * v));
    if (w.backward) {
      plan.phases.push_back(stream("scale_x", 4 * n * d));
      plan.phases.push_back(product("dw", v, d, n, w.dw_bytes, c > 0));
      plan.phases.push_back(product("dx", n, d, v));
      plan.phases.push_back(stream("scale_dx", 4 * n * d));
    }
  });
  plan.phases.push_back(stream("reduce", 4 * tokens));
  return plan;
}

Plan msm_plan(const Msm& w, int chunks) {
  require(w.rows > 0 && w.width > 0 && w.cols > 0, "msm: rows, d and cols must be positive");
  require(chunks >= 1 && chunks <= w.rows, "msm: chunks must be between 1 and rows");
  Plan plan = start({w, chunks});
  const double d = static_cast<double>(w.width), cols = static_cast<double>(w.cols);
  for_each_chunk(w.rows, rows_per_chunk(w.rows, chunks), [&](int64_t, int64_t, int64_t rows) {
    const double r = static_cast<double>(rows);
    plan.phases.push_back(product("qk", r, cols, d));
    // The project's softmax (kernels/synthetic.cu): a block a row, three passes (max, sum, write).
    const double pass = 2 * 2 * r * cols;  // bf16 read and written once
    plan.phases.push_back(stream("softmax", pass));
    plan.phases.back().reread_bytes = pass;  // two more reads
    plan.phases.back().row_bytes = 2 * cols;
    plan.phases.push_back(product("pv", r, d, cols));
  });
  return plan;
}

Plan products_plan(const Products& w) {
  require(w.size > 0, "products: the size must be positive");
  Plan plan = start({w});
  const double n = static_cast<double>(w.size);
  plan.phases.push_back(product("product", n, n, n));
  plan.phases.back().efficiency = 1;  // the size profiles are fitted to
  return plan;
}

Plan square_plan(const Square& w, const Rates& r) {
  const SquareSizing z = size_square(w, r);
  Plan plan = start({w});
  Phase burst;
  burst.name = "burst";
  burst.flops = z.burst_flops();
  const double n = static_cast<double>(SquareSizing::kBurstSize);
  burst.bytes = static_cast<double>(z.full) * product_bytes(n, n, n, 2, false) +
                (z.last_k > 0 ? product_bytes(n, n, static_cast<double>(z.last_k), 2, false) : 0);
  plan.phases.push_back(burst);
  if (w.gap == Gap::kIdle) {
    Phase idle;
    idle.name = "gap";
    idle.kind = PhaseKind::kIdle;
    idle.seconds = z.gap_s;
    plan.phases.push_back(idle);
  } else {
    plan.phases.push_back(stream("gap", z.gap_bytes));
  }
  return plan;
}

Plan make_plan(const Workload& w, const Rates& r) {
  if (const auto* l = std::get_if<LmHead>(&w.kind)) return lmhead_plan(*l, w.chunks);
  if (const auto* m = std::get_if<Msm>(&w.kind)) return msm_plan(*m, w.chunks);
  if (const auto* s = std::get_if<Square>(&w.kind)) return square_plan(*s, r);
  if (const auto* p = std::get_if<Products>(&w.kind)) return products_plan(*p);
  throw invalid_input("a custom workload has no phases to derive: read its plan from its file");
}

}  // namespace powershape::workload
