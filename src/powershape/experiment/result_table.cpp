#include "powershape/experiment/result_table.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace powershape::experiment {
namespace {

std::string ratio(const experiment::Interval& i) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f [%.4f, %.4f]", i.mid, i.lo, i.hi);
  return buf;
}

}  // namespace

void print_result(std::FILE* out, const experiment::Result& r) {
  std::fprintf(out, "warm-up: %.1f s, %s\n\n", r.warmup_s,
               r.settled ? "power controller settled" : "NOT settled within the limit");
  // The names' column fits the longest ("lmhead forward 131072x896x151936 chunks=16").
  int width = 34;
  for (const auto& c : r.configs) width = std::max(width, static_cast<int>(c.name.size()));
  std::fprintf(out, "%-*s %10s %-26s %9s %-26s %6s %6s %6s %6s %5s  %s\n", width, "configuration",
               "ms/iter", "time ratio [95% CI]", "J/iter", "energy ratio [95% CI]", "W", "MHz",
               "TF/s", "capped", "C", "verdict");
  for (const auto& c : r.configs) {
    std::fprintf(out,
                 "%-*s %10.3f %-26s %9.3f %-26s %6.0f %6.0f %6.1f %5.0f%% %5.0f  time: %s, energy: "
                 "%s\n",
                 width, c.name.c_str(), c.ms_per_iteration, ratio(c.time_ratio).c_str(),
                 c.j_per_iteration, ratio(c.energy_ratio).c_str(), c.avg_power_w, c.sm_clock_mhz,
                 c.compute_tflops, c.power_capped * 100, c.peak_temp_c, c.time_verdict.c_str(),
                 c.energy_verdict.c_str());
  }
  const auto& b = r.configs[r.baseline];
  // "fastest: X, 1.23% faster than B (verdict)", or the baseline itself.
  auto best = [&](std::size_t i, const experiment::Interval experiment::ConfigResult::*ratio,
                  const char* less, const char* more,
                  const std::string experiment::ConfigResult::*verdict) {
    const auto& c = r.configs[i];
    if (i == r.baseline)  // no other beyond the bound its verdict takes, faster as it may read
      return "the baseline, " + b.name + " (no other by more than its verdict's bound)";
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s, %.2f%% %s than %s (%s)", c.name.c_str(),
                  std::abs(1 - (c.*ratio).mid) * 100, (c.*ratio).mid <= 1 ? less : more,
                  b.name.c_str(), (c.*verdict).c_str());
    return std::string(buf);
  };
  std::fprintf(out, "\nfastest: %s; least energy: %s\n",
               best(r.best_time, &experiment::ConfigResult::time_ratio, "faster", "slower",
                    &experiment::ConfigResult::time_verdict)
                   .c_str(),
               best(r.best_energy, &experiment::ConfigResult::energy_ratio, "less energy",
                    "more energy", &experiment::ConfigResult::energy_verdict)
                   .c_str());
}

}  // namespace powershape::experiment
