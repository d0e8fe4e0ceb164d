#include "powershape/workload/builders.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "powershape/util/error.hpp"
#include "powershape/workload/chunks.hpp"
#include "powershape/workload/steps.hpp"

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

namespace {

// The shapes and chunk counts each kind can be planned with.
void check(const Workload& w) {
  if (const auto* l = std::get_if<LmHead>(&w.kind)) {
    require(l->tokens > 0 && l->width > 0 && l->vocab > 0, "lmhead: N, D and V must be positive");
    require(w.chunks >= 1 && w.chunks <= l->tokens, "lmhead: chunks must be between 1 and N");
    require(l->ce_bytes_per_logit > 0, "lmhead: bytes per logit must be positive");
  } else if (const auto* p = std::get_if<LmHeadProducts>(&w.kind)) {
    require(p->tokens > 0 && p->width > 0 && p->vocab > 0, "lmhead: N, D and V must be positive");
    require(w.chunks >= 1 && w.chunks <= p->tokens, "lmhead: chunks must be between 1 and N");
  } else if (const auto* m = std::get_if<Msm>(&w.kind)) {
    require(m->rows > 0 && m->width > 0 && m->cols > 0, "msm: rows, d and cols must be positive");
    require(w.chunks >= 1 && w.chunks <= m->rows, "msm: chunks must be between 1 and rows");
  } else if (const auto* q = std::get_if<Products>(&w.kind)) {
    require(q->size > 0, "products: the size must be positive");
  } else if (std::holds_alternative<Custom>(w.kind)) {
    throw invalid_input("a custom workload has no phases to derive: read its plan from its file");
  }
}

}  // namespace

// A phase a step (steps.hpp), so that the simulator runs what the GPU runs: the LM head op's
// steps its own, a square wave's products one burst.
Plan make_plan(const Workload& w, const Rates& r) {
  check(w);
  Plan plan = start(w);
  workload_steps(w, r, [&](const WorkloadStep& s) {
    if (s.op == Op::kLmHead) {
      const auto& l = std::get<LmHead>(w.kind);
      lmhead_steps(l.tokens, lmhead_options(l, w.chunks), false,
                   [&](const LmHeadStep& x) { plan.phases.push_back(phase_of(x, l)); });
      return;
    }
    const Phase ph = phase_of(s);
    if (s.op == Op::kBurst && !plan.phases.empty() && plan.phases.back().name == ph.name) {
      plan.phases.back().flops += ph.flops;
      plan.phases.back().bytes += ph.bytes;
      return;
    }
    plan.phases.push_back(ph);
  });
  return plan;
}

Plan lmhead_plan(const LmHead& w, int chunks) { return make_plan({w, chunks}, {}); }
Plan msm_plan(const Msm& w, int chunks) { return make_plan({w, chunks}, {}); }
Plan products_plan(const Products& w) { return make_plan({w}, {}); }
Plan square_plan(const Square& w, const Rates& r) { return make_plan({w}, r); }

}  // namespace powershape::workload
