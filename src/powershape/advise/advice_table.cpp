#include "powershape/advise/advice_table.hpp"

#include <string>

#include "powershape/util/printable.hpp"

namespace powershape::advise {
namespace {

bool within_bound(const Outcome& o, double max_slowdown) {
  return max_slowdown < 0 || o.time_ratio.mid <= 1 + max_slowdown;
}

}  // namespace

void print_selector_pick(std::FILE* out, const Outcome& o, double max_slowdown) {
  if (!within_bound(o, max_slowdown)) return;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "the learned selector's energy pick (from features of the run as found, no "
                "sweep): %s: energy %+.1f%%, time %+.1f%%\n",
                o.setting.describe().c_str(), (o.energy_ratio.mid - 1) * 100,
                (o.time_ratio.mid - 1) * 100);
  std::fputs(buf, out);
}

void print_choice(std::FILE* out, const std::vector<Outcome>& o, std::size_t chosen,
                  const experiment::Objective& obj, double max_slowdown) {
  const auto& c = o[chosen];
  const std::string bound =
      max_slowdown >= 0 ? ", at most " + util::printable(max_slowdown * 100) + "% slower" : "";
  if (chosen == 0) {
    std::fprintf(out, "\nrecommended: leave the GPU as found: no setting improves %s%s\n",
                 obj.describe().c_str(), bound.c_str());
    return;
  }
  std::fprintf(
      out,
      "\nrecommended: %s: energy %+.1f%% [%+.1f, %+.1f], time %+.1f%% [%+.1f, %+.1f] against "
      "the GPU as found (objective %s%s)\n",
      c.setting.describe().c_str(), (c.energy_ratio.mid - 1) * 100, (c.energy_ratio.lo - 1) * 100,
      (c.energy_ratio.hi - 1) * 100, (c.time_ratio.mid - 1) * 100, (c.time_ratio.lo - 1) * 100,
      (c.time_ratio.hi - 1) * 100, obj.describe().c_str(), bound.c_str());
}

void print_classes(std::FILE* out, const TraceAdvice& a) {
  const auto& m = a.model;
  std::fprintf(out, "\n%-14s %7s %10s %7s %12s %7s %15s %22s %8s\n", "class", "windows", "seconds",
               "time", "energy J", "energy", "clocks MHz", "P(f) static + slope W", "RMS W");
  double total_s = 0, total_j = 0;
  for (const auto& s : a.shares) {
    total_s += s.seconds;
    total_j += s.energy_j;
  }
  for (const auto& s : a.shares) {
    std::fprintf(out, "%-14s %7d %10.1f %6.1f%% %12.0f %6.1f%%", analysis::to_string(s.cls).c_str(),
                 s.windows, s.seconds, s.seconds / total_s * 100, s.energy_j,
                 s.energy_j / total_j * 100);
    for (const auto& c : m.classes) {
      if (c.cls != s.cls || c.windows == 0) continue;
      std::fprintf(out, " %7.0f-%-7.0f %8.1f + %-8.1f%s %8.1f", c.clock_lo_mhz, c.clock_hi_mhz,
                   c.static_w, c.slope_w, c.fitted ? "  " : " *", c.rms_w);
    }
    std::fprintf(out, "\n");
  }
  std::fprintf(out,
               "(* too narrow a clock range to fit: idle power + each window's own activity)\n");
  if (m.step_clock_share >= 0)
    std::fprintf(out,
                 "learned from %d '%s' regions: %.0f%% of a step's time scales with the clock\n",
                 m.steps, m.step_region.c_str(), m.step_clock_share * 100);
  else if (m.steps > 0)
    std::fprintf(out,
                 "clock-bound share of time assumed by class (compute-bound 85-100%%, "
                 "memory-bound 0-50%%, bursty 30-80%%): the %d '%s' regions ran at one clock or "
                 "at the power cap, which says nothing of time against clock\n",
                 m.steps, m.step_region.c_str());
  else
    std::fprintf(out,
                 "clock-bound share of time assumed by class (compute-bound 85-100%%, "
                 "memory-bound 0-50%%, bursty 30-80%%; mark steps as regions to learn it)\n");
}

void print_mfu_fit(std::FILE* out, const std::string& from, double peak_flops_per_s,
                   const std::string& peak_from, const std::vector<MfuPoint>& points,
                   const MfuModel& m, double power_limit_w) {
  std::fprintf(
      out,
      "MFU power model from %s (MFU against %.0f TFLOP/s, %s):\n"
      "  P = %.1f W + %.1f W x MFU, fitted on %d uncapped compute conditions, RMS %.1f W\n\n",
      from.c_str(), peak_flops_per_s * 1e-12, peak_from.c_str(), m.idle_w, m.w_per_mfu, m.fitted_on,
      m.rms_w);
  std::fprintf(out, "%-40s %7s %9s %9s %8s  %s\n", "condition", "MFU", "power W", "model W",
               "error", "");
  for (const auto& x : points) {
    const double pred = m.predict_w(x.mfu);
    // A condition's mean can sit far under the limit while its bursts meet it (a square wave
    // capped in its bursts, idle between): only a mean near the limit is "at" it.
    char capped[96];
    std::snprintf(capped, sizeof capped,
                  x.power_w >= 0.9 * power_limit_w
                      ? "at the power cap: power stops at the limit"
                      : "its bursts meet the power cap (%.0f%% of its time): power stops there",
                  x.power_capped * 100);
    const char* why = x.memory                ? "memory gaps: power no FLOP counts"
                      : x.power_capped >= 0.2 ? capped
                                              : "fitted";
    std::fprintf(out, "%-40s %7.3f %9.1f %9.1f %+7.1f%%  %s\n", x.name.substr(0, 40).c_str(), x.mfu,
                 x.power_w, pred, (pred - x.power_w) / x.power_w * 100, why);
  }
}

void print_trace_advice(std::FILE* out, const TraceAdvice& r, const std::string& label, int gpu,
                        double max_slowdown) {
  std::fprintf(out, "powershape advise from %s, GPU %d (%s; V/f curve: %s)\n", label.c_str(), gpu,
               r.device.name.empty() ? "not named in the trace" : r.device.name.c_str(),
               r.profile.empty() ? ("generic, to " + util::printable(r.model.volts.max_mhz) +
                                    " MHz: " + r.generic_why)
                                       .c_str()
                                 : r.profile.c_str());
  print_choice(out, r.outcomes, r.chosen, r.objective, max_slowdown);
  if (!r.grid_said.empty()) std::fprintf(out, "%s\n", r.grid_said.c_str());
  if (r.selector_pick) print_selector_pick(out, *r.selector_pick, max_slowdown);
  print_classes(out, r);
  std::fprintf(out, "\npredicted for the recorded work, objective %s",
               r.objective.describe().c_str());
  if (max_slowdown >= 0)
    std::fprintf(out, ", at most %s%% slower at the interval's upper end",
                 util::printable(max_slowdown * 100).c_str());
  std::fprintf(out, ":\n");
}

void print_sim_advice(std::FILE* out, const SimAdvice& r, const std::string& workload,
                      const sim::Profile& p, double max_slowdown) {
  std::fprintf(out, "powershape advise: %s on simulated %s (%s profile), objective %s\n",
               workload.c_str(), p.name.c_str(), p.status.c_str(), r.objective.describe().c_str());
  std::fprintf(out,
               "%zu settings simulated (%d runs; every settable value would be %zu settings)\n",
               r.outcomes.size(), r.simulations, r.every);
  print_choice(out, r.outcomes, r.chosen, r.objective, max_slowdown);
  print_selector_pick(out, r.selector_pick, max_slowdown);
}

}  // namespace powershape::advise
