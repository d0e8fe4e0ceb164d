#include "powershape/workload/builders.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace powershape::workload {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

Phase product(const std::string& name, double m, double n, double k) {
  Phase p;
  p.name = name;
  p.kind = PhaseKind::kCompute;
  p.flops = 2 * m * n * k;
  p.efficiency = product_efficiency(m, n, k);
  return p;
}

Phase stream(const std::string& name, double bytes) {
  Phase p;
  p.name = name;
  p.kind = PhaseKind::kMemory;
  p.bytes = bytes;
  return p;
}

}  // namespace

double product_efficiency(double m, double n, double k) {
  constexpr double kSms = 132;
  double tiles = std::ceil(m / 128) * std::ceil(n / 128);
  if (tiles < kSms) tiles *= std::clamp(std::floor(k / 4096), 1.0, std::ceil(kSms / tiles));
  const double fill = std::min(1.0, tiles / kSms);  // stream-K kernels even out partial waves
  return fill * k / (k + 32);
}

Plan lmhead_plan(const LmHeadShape& s, int chunks, bool backward, double ce_bytes_per_logit) {
  require(s.n > 0 && s.d > 0 && s.v > 0, "lmhead: N, D and V must be positive");
  require(chunks >= 1 && chunks <= s.n, "lmhead: chunks must be between 1 and N");
  require(ce_bytes_per_logit > 0, "lmhead: bytes per logit must be positive");
  Plan plan;
  plan.name = "lmhead " + std::to_string(s.n) + "x" + std::to_string(s.d) + "x" +
              std::to_string(s.v) + " chunks=" + std::to_string(chunks);
  plan.spec = {Spec::Kind::kLmHead, s.n, s.d, s.v, chunks, backward};
  const int64_t per = (s.n + chunks - 1) / chunks;
  for (int64_t start = 0; start < s.n; start += per) {
    const double n = static_cast<double>(std::min(per, s.n - start));
    const double d = static_cast<double>(s.d), v = static_cast<double>(s.v);
    plan.phases.push_back(product("logits", n, v, d));
    // Targets and per-token stats are negligible beside the logits.
    plan.phases.push_back(stream("cross_entropy", ce_bytes_per_logit * n * v));
    if (backward) {
      plan.phases.push_back(product("dx", n, d, v));
      plan.phases.push_back(product("dw", v, d, n));
    }
  }
  return plan;
}

Plan msm_plan(int64_t rows, int64_t d, int64_t cols, int chunks) {
  require(rows > 0 && d > 0 && cols > 0, "msm: rows, d and cols must be positive");
  require(chunks >= 1 && chunks <= rows, "msm: chunks must be between 1 and rows");
  Plan plan;
  plan.name = "msm " + std::to_string(rows) + "x" + std::to_string(d) + "x" + std::to_string(cols) +
              " chunks=" + std::to_string(chunks);
  plan.spec = {Spec::Kind::kMsm, rows, d, cols, chunks};
  const int64_t per = (rows + chunks - 1) / chunks;
  for (int64_t start = 0; start < rows; start += per) {
    const double r = static_cast<double>(std::min(per, rows - start));
    plan.phases.push_back(product("qk", r, static_cast<double>(cols), static_cast<double>(d)));
    plan.phases.push_back(stream("softmax", 2 * 2 * r * static_cast<double>(cols)));
    plan.phases.push_back(product("pv", r, static_cast<double>(d), static_cast<double>(cols)));
  }
  return plan;
}

Plan products_plan(int64_t size) {
  require(size > 0, "products: the size must be positive");
  Plan plan;
  plan.name = "products " + std::to_string(size) + "^3";
  plan.spec.kind = Spec::Kind::kProducts;
  plan.spec.a = size;
  plan.phases.push_back(product("product", static_cast<double>(size), static_cast<double>(size), static_cast<double>(size)));
  plan.phases.back().efficiency = 1;  // the size profiles are fitted to
  return plan;
}

Plan square_plan(double period_s, double duty, Gap gap, double flops_per_s, double bytes_per_s) {
  require(period_s > 0, "square: the period must be positive");
  require(duty > 0 && duty < 1, "square: the duty must be between 0 and 1");
  require(flops_per_s > 0 && bytes_per_s > 0, "square: rates must be positive");
  Plan plan;
  plan.name = "square " + std::to_string(period_s * 1e3) + " ms duty " + std::to_string(duty);
  plan.spec.kind = Spec::Kind::kSquare;
  plan.spec.period_s = period_s;
  plan.spec.duty = duty;
  plan.spec.memory_gap = gap == Gap::kMemory;
  Phase burst;
  burst.name = "burst";
  burst.flops = duty * period_s * flops_per_s;
  plan.phases.push_back(burst);
  const double gap_s = (1 - duty) * period_s;
  if (gap == Gap::kIdle) {
    Phase idle;
    idle.name = "gap";
    idle.kind = PhaseKind::kIdle;
    idle.seconds = gap_s;
    plan.phases.push_back(idle);
  } else {
    plan.phases.push_back(stream("gap", gap_s * bytes_per_s));
  }
  return plan;
}

}  // namespace powershape::workload
