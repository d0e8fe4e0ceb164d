#include "powershape/optimize/optimize_table.hpp"

#include <string>

namespace powershape::optimize {
namespace {

double pct(double share) { return 100 * share; }

void print_diagnosis(std::FILE* out, const Result& r, double tokens_per_step) {
  const auto& d = r.diagnosis;
  const auto& m = d.as_found;
  const char* unit = d.by_steps ? "step" : "run";
  std::fprintf(out, "\nas found: %d %s%s, %.1f ms and %.1f J a %s, %.0f W, SM clock %.0f MHz",
               m.iterations, unit, m.iterations == 1 ? "" : "s", m.ms_per_iteration,
               m.j_per_iteration(), unit, m.avg_power_w, m.sm_clock_mhz);
  if (d.max_clock_mhz > 0) std::fprintf(out, " of %.0f", d.max_clock_mhz);
  if (tokens_per_step > 0 && m.ms_per_iteration > 0)
    std::fprintf(out, ", %.0f tokens/s", tokens_per_step / (m.ms_per_iteration * 1e-3));
  std::fprintf(out, ", %.0f C at most\n", m.peak_temp_c);
  if (d.throttled()) {
    std::fprintf(
        out,
        "throttling: power-capped %.0f%% and thermally throttled %.0f%% of the %s; the clock was "
        "under 97%% of its maximum %.0f%% of the busy time",
        pct(d.power_capped), pct(d.thermal), d.by_steps ? "steps" : "run", pct(d.reduced_clock));
    if (d.dipped_steps >= 0)
      std::fprintf(out, ", and dipped in %.0f%% of the steps", pct(d.dipped_steps));
    std::fprintf(out, ";\n  at most %.1f%% of the %s time went to the lower clock\n",
                 pct(d.throttle_cost), d.by_steps ? "steps'" : "run's");
  } else {
    std::fprintf(
        out,
        "throttling: none to speak of (power-capped %.1f%%, thermally throttled %.1f%% of the "
        "%s; the clock under 97%% of its maximum %.0f%% of the busy time)\n",
        pct(d.power_capped), pct(d.thermal), d.by_steps ? "steps" : "run", pct(d.reduced_clock));
  }
  double total = 0;
  for (const auto& s : d.shares) total += s.energy_j;
  if (total > 0) {
    std::fprintf(out, "energy by phase:");
    for (const auto& s : d.shares) {
      if (s.energy_j > 0)
        std::fprintf(out, " %s %.0f%% (%.1f s)", analysis::to_string(s.cls).c_str(),
                     pct(s.energy_j / total), s.seconds);
    }
    std::fprintf(out, "\n");
  }
}

void print_knobs(std::FILE* out, const Result& r, bool applied) {
  if (r.race) {
    const auto& race = *r.race;
    std::fprintf(out, "\nchunk counts (%d measurements, %.0f s):\n", race.measurements,
                 race.search_s);
    for (const auto& c : race.candidates) {
      if (c.rounds == 0) continue;
      std::fprintf(out, "  %-22s %3d runs %10.1f ms %9.1f J  %s\n", c.name.c_str(), c.rounds, c.ms,
                   c.joules, c.why.c_str());
    }
  }
  if (r.advice) {
    const auto& pick = r.advice->outcomes[r.advice->chosen];
    std::fprintf(out, "settings, predicted from the as-found trace%s: %s",
                 applied ? "" : " (none changed)", pick.setting.describe().c_str());
    if (r.advice->chosen != 0)
      std::fprintf(out, ", time %.3f [%.3f, %.3f], energy %.3f [%.3f, %.3f]", pick.time_ratio.mid,
                   pick.time_ratio.lo, pick.time_ratio.hi, pick.energy_ratio.mid,
                   pick.energy_ratio.lo, pick.energy_ratio.hi);
    std::fprintf(out, "\n");
  }
  if (!r.grid.empty()) {
    std::fprintf(out, "\ngrid spec:\n");
    for (const auto& c : r.grid)
      std::fprintf(out, "  %-28s %s\n", (c.name + (c.predicted ? " (predicted)" : "")).c_str(),
                   c.describe().c_str());
  }
  for (const auto& n : r.notes) std::fprintf(out, "note: %s\n", n.c_str());
}

void print_recommendation(std::FILE* out, const Result& r, const std::string& measure_with) {
  const auto& x = r.recommendation;
  if (x.kind == Recommendation::kNone) {
    if (!r.race && !r.advice) {
      std::fprintf(out, "\nrecommendation: none: nothing could be tried (the notes say why)\n");
    } else {
      std::fprintf(
          out,
          "\nrecommendation: none: nothing tried beat the job as found on %s by more than its "
          "noise%s\n",
          r.objective.describe().c_str(),
          r.grid.empty() ? "" : ", or nothing else was within the grid spec");
    }
    return;
  }
  const char* unit = r.diagnosis.by_steps ? "step" : "run";
  std::fprintf(out, "\nrecommendation: %s (%s)\n", x.what.c_str(),
               x.measured ? "measured" : ("predicted; " + measure_with).c_str());
  std::fprintf(out, "  time %.4f [%.4f, %.4f], energy %.4f [%.4f, %.4f] of the job as found%s\n",
               x.time_ratio.mid, x.time_ratio.lo, x.time_ratio.hi, x.energy_ratio.mid,
               x.energy_ratio.lo, x.energy_ratio.hi,
               x.measured && r.race && r.grid.empty()
                   ? ", on fresh paired runs (the race's medians above flatter "
                     "its winner)"
                   : "");
  std::fprintf(out, "  saves %.1f ms and %.1f J a %s; %.1f Wh an hour of the job; %.2f Wh a run\n",
               x.ms_saved_per_step, x.j_saved_per_step, unit, x.wh_saved_per_hour,
               x.wh_saved_per_run);
}

}  // namespace

void print_result(std::FILE* out, const Result& r, double tokens_per_step, bool applied,
                  const std::string& measure_with) {
  print_diagnosis(out, r, tokens_per_step);
  print_knobs(out, r, applied);
  print_recommendation(out, r, measure_with);
}

}  // namespace powershape::optimize
