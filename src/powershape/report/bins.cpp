#include "powershape/report/bins.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace powershape::report {
namespace {
constexpr float kNone = std::numeric_limits<float>::quiet_NaN();
}  // namespace

Bins make_bins(int64_t from_ns, int64_t to_ns, std::size_t count) {
  Bins b;
  b.from_ns = from_ns;
  const int64_t span = std::max<int64_t>(to_ns - from_ns, 0) + 1;  // to_ns is inside
  b.width_ns = std::max<int64_t>(1, (span + static_cast<int64_t>(count) - 1) /
                                        static_cast<int64_t>(std::max<std::size_t>(count, 1)));
  b.count = static_cast<std::size_t>((span + b.width_ns - 1) / b.width_ns);
  return b;
}

ExtremeBins::ExtremeBins(const Bins& b, double scale)
    : held_(b),
      scale_(scale),
      e_{std::vector<float>(b.count, kNone), std::vector<float>(b.count, kNone)} {}

void ExtremeBins::put(std::size_t k, int64_t v) {
  const auto x = static_cast<float>(static_cast<double>(v) * scale_);
  e_.min[k] = std::isnan(e_.min[k]) ? x : std::min(e_.min[k], x);
  e_.max[k] = std::isnan(e_.max[k]) ? x : std::max(e_.max[k], x);
}

void ExtremeBins::add(analysis::Point p) {
  held_.add(p, [&](std::size_t k, int64_t v, int64_t) { put(k, v); });
}

Extremes ExtremeBins::finish() {
  held_.finish([&](std::size_t k, int64_t v, int64_t) { put(k, v); });
  return std::move(e_);
}

FractionBins::FractionBins(const Bins& b) : held_(b), covered_(b.count, 0), on_(64) {}

void FractionBins::put(std::size_t k, int64_t v, int64_t ns) {
  covered_[k] += static_cast<double>(ns);
  // Only the bits NVML names are drawn: no other bit takes a row of bins (64 of them would).
  uint64_t known = 0;
  for (const auto& r : telemetry::reason::kAll) known |= r.bit;
  for (auto bits = static_cast<uint64_t>(v) & known; bits != 0; bits &= bits - 1) {
    auto& on = on_[static_cast<std::size_t>(std::countr_zero(bits))];
    if (on.empty()) on.assign(covered_.size(), 0);
    on[k] += static_cast<double>(ns);
  }
}

void FractionBins::add(analysis::Point p) {
  seen_ |= static_cast<uint64_t>(p.value);
  held_.add(p, [&](std::size_t k, int64_t v, int64_t ns) { put(k, v, ns); });
}

void FractionBins::finish() {
  held_.finish([&](std::size_t k, int64_t v, int64_t ns) { put(k, v, ns); });
}

std::vector<float> FractionBins::fraction(uint64_t bit) const {
  const auto& on = on_[static_cast<std::size_t>(std::countr_zero(bit))];
  std::vector<float> out(covered_.size(), kNone);
  for (std::size_t k = 0; k < covered_.size(); ++k) {
    if (covered_[k] > 0) out[k] = on.empty() ? 0.0f : static_cast<float>(on[k] / covered_[k]);
  }
  return out;
}

}  // namespace powershape::report
