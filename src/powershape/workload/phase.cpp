#include "powershape/workload/phase.hpp"

#include <algorithm>
#include <cmath>

namespace powershape::workload {

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

Phase batched_product(const std::string& name, int64_t batch, int64_t m, int64_t n, int64_t k) {
  const double b = static_cast<double>(batch), mm = static_cast<double>(m),
               nn = static_cast<double>(n), kk = static_cast<double>(k);
  Phase p = product(name, b * mm, nn, kk);
  p.bytes = b * product_bytes(mm, nn, kk, 2, false);
  p.result_bytes = b * mm * nn * 2;
  return p;
}

Phase stream(const std::string& name, double bytes) {
  Phase p;
  p.name = name;
  p.kind = PhaseKind::kMemory;
  p.bytes = bytes;
  return p;
}

Phase softmax_rows_phase(const std::string& name, int64_t m, int64_t n) {
  const double bytes = 2.0 * 2 * static_cast<double>(m) * static_cast<double>(n);
  Phase p = stream(name, bytes);
  p.reread_bytes = bytes;
  p.row_bytes = 2 * static_cast<double>(n);
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

std::string to_string(PhaseKind k) {
  switch (k) {
    case PhaseKind::kCompute:
      return "compute";
    case PhaseKind::kMemory:
      return "memory";
    case PhaseKind::kIdle:
      return "idle";
  }
  return "compute";
}

}  // namespace powershape::workload
