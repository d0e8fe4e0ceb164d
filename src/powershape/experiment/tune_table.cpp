#include "powershape/experiment/tune_table.hpp"

namespace powershape::experiment {

void print_tune_result(std::FILE* out, const TuneResult& r) {
  std::fprintf(out, "\n%-44s %6s %10s %10s %12s  %s\n", "candidate", "rounds", "ms/iter", "J/iter",
               "objective", "");
  for (const auto& c : r.candidates) {
    if (c.rounds == 0) {
      std::fprintf(out, "%-44s %6d %10s %10s %12s  %s\n", c.name.c_str(), 0, "-", "-", "-",
                   c.why.c_str());
    } else {
      std::fprintf(out, "%-44s %6d %10.3f %10.3f %12.5g  %s\n", c.name.c_str(), c.rounds, c.ms,
                   c.joules, c.score, c.why.c_str());
    }
  }
  const auto& chosen = r.candidates[r.chosen];
  std::fprintf(out, "\nchoice: %s (%s)\n", chosen.name.c_str(),
               r.chosen == r.baseline ? "the baseline"
               : r.resolved           ? "resolved"
                            : "better than the baseline on the fresh pairs' median, not resolved");
  if (r.chosen != r.baseline) {
    std::fprintf(
        out,
        "against the baseline, on fresh paired rounds: objective %.4f [%.4f, %.4f], time %.4f "
        "[%.4f, %.4f], energy %.4f [%.4f, %.4f]\n",
        r.score_ratio.mid, r.score_ratio.lo, r.score_ratio.hi, r.time_ratio.mid, r.time_ratio.lo,
        r.time_ratio.hi, r.energy_ratio.mid, r.energy_ratio.lo, r.energy_ratio.hi);
  }
  std::fprintf(
      out,
      "search: %d measurements, %.1f s (+ %.1f s warm-up); an exhaustive sweep: %d, %.1f s "
      "(%.0f%%)\n",
      r.measurements, r.search_s, r.warmup_s, r.exhaustive_measurements, r.exhaustive_s,
      100 * r.search_s / r.exhaustive_s);
}

}  // namespace powershape::experiment
