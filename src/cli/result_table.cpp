#include "result_table.hpp"

#include <string>

namespace powershape::cli {
namespace {

std::string ratio(const bench::Interval& i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f [%.4f, %.4f]", i.mid, i.lo, i.hi);
  return buf;
}

}  // namespace

void print_result(std::FILE* out, const bench::Result& r) {
  std::fprintf(out, "warm-up: %.1f s, %s\n\n", r.warmup_s,
               r.settled ? "power controller settled" : "NOT settled within the limit");
  std::fprintf(out, "%-34s %10s %-26s %9s %-26s %6s %6s %6s %6s %5s  %s\n", "configuration", "ms/iter",
               "time ratio [95% CI]", "J/iter", "energy ratio [95% CI]", "W", "MHz", "TF/s",
               "capped", "C", "verdict");
  for (const auto& c : r.configs) {
    std::fprintf(out, "%-34s %10.3f %-26s %9.3f %-26s %6.0f %6.0f %6.1f %5.0f%% %5.0f  %s, %s\n",
                 c.name.c_str(), c.ms_per_iteration, ratio(c.time_ratio).c_str(), c.j_per_iteration,
                 ratio(c.energy_ratio).c_str(), c.avg_power_w, c.sm_clock_mhz, c.compute_tflops,
                 c.power_capped * 100, c.peak_temp_c, c.time_verdict.c_str(), c.energy_verdict.c_str());
  }
  const auto& b = r.configs[r.baseline];
  const auto& t = r.configs[r.best_time];
  const auto& e = r.configs[r.best_energy];
  std::fprintf(out, "\nfastest: %s, %.2f%% %s than %s (%s); least energy: %s, %.2f%% %s (%s)\n",
               t.name.c_str(), std::abs(1 - t.time_ratio.mid) * 100,
               t.time_ratio.mid <= 1 ? "faster" : "slower", b.name.c_str(), t.time_verdict.c_str(),
               e.name.c_str(), std::abs(1 - e.energy_ratio.mid) * 100,
               e.energy_ratio.mid <= 1 ? "less" : "more", e.energy_verdict.c_str());
}

}  // namespace powershape::cli
