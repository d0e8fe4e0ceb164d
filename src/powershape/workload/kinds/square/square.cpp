#include "powershape/workload/kinds/square/square.hpp"

#include <algorithm>
#include <cmath>

#include "powershape/util/error.hpp"

namespace powershape::workload {

std::optional<Square> Square::from_args(const WorkloadArgs& a, const Sizes&) {
  if (a.gap != "idle" && a.gap != "memory") throw invalid_input("gap", "expected idle or memory");
  return Square{a.period_ms, a.duty, a.gap == "idle" ? Gap::kIdle : Gap::kMemory};
}

std::vector<Square> Square::examples() {
  return {Square{10, 0.5, Gap::kIdle}, Square{10, 0.5, Gap::kMemory}};
}

std::string Square::name(int) const {
  return "square " + std::to_string(period_ms) + " ms duty " + std::to_string(duty);
}

void Square::check(int) const {
  require(period_ms > 0 && period_ms <= 3.6e6,
          "square: the period must be positive and at most an hour (3600000 ms)");
  require(duty > 0 && duty < 1, "square: the duty must be between 0 and 1");
}

double SquareSizing::burst_flops() const {
  const double n = static_cast<double>(kBurstSize);
  return 2 * n * n * (n * static_cast<double>(full) + static_cast<double>(last_k));
}

SquareSizing size_square(const Square& s, const Rates& r) {
  s.check(1);
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

// The burst's products are one phase in a plan (they join), their shapes left out: a burst is
// several products.
void Square::steps(int, const Rates& r, const StepFn& f) const {
  const auto z = size_square(*this, r);
  const int64_t n = SquareSizing::kBurstSize;
  const auto burst = [&](int64_t k) {
    const double m = static_cast<double>(n), kk = static_cast<double>(k);
    Phase p;
    p.name = "burst";
    p.flops = 2 * m * m * kk;
    p.bytes = product_bytes(m, m, kk, 2, false);
    WorkloadStep s = step_of(kBurst, p, n, n, k);
    s.joins = true;
    f(s);
  };
  for (int64_t i = 0; i < z.full; ++i) burst(n);
  if (z.last_k > 0) burst(z.last_k);
  if (gap == Gap::kMemory) {
    WorkloadStep s = step_of(kStream, stream("gap", z.gap_bytes));
    s.bytes = z.gap_bytes;
    f(s);
  } else {
    Phase p;
    p.name = "gap";
    p.kind = PhaseKind::kIdle;
    p.seconds = z.gap_s;
    WorkloadStep s = step_of(kSpin, p);
    s.seconds = z.gap_s;
    f(s);
  }
}

}  // namespace powershape::workload
