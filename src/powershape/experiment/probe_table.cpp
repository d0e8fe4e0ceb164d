#include "powershape/experiment/probe_table.hpp"

namespace powershape::experiment {

void print_probe_heading(std::FILE* out) {
  std::fprintf(out, "\n%-7s %10s %12s %10s %8s %8s\n", "gap", "period ms", "burst TF/s", "SM MHz",
               "capped", "W");
}

void print_probe_point(std::FILE* out, const ProbePoint& pt) {
  std::fprintf(out, "%-7s %10.0f %12.1f %10.0f %7.0f%% %8.0f\n", pt.gap.c_str(), pt.period_ms,
               pt.m.compute_tflops, pt.m.sm_clock_mhz, pt.m.power_capped * 100, pt.m.avg_power_w);
}

void print_probe_curve(std::FILE* out, const ProbeCurve& c, const std::string& gap) {
  const auto& cont = c.sustained;
  std::fprintf(out, "%-7s %10s %12.1f %10.0f %7.0f%% %8.0f\n", "none", "-", cont.compute_tflops,
               cont.sm_clock_mhz, cont.power_capped * 100, cont.avg_power_w);
  std::fprintf(
      out, "\nboost (best burst) %.1f TFLOP/s, sustained %.1f TFLOP/s: sustained-to-boost %.3f\n",
      c.boost_tflops, cont.compute_tflops, cont.compute_tflops / c.boost_tflops);
  if (c.step_response_ms) {
    std::fprintf(out,
                 "controller response after a load step: the reported SM clock fell 5%% under its "
                 "maximum after %.0f ms\n",
                 *c.step_response_ms);
  } else {
    std::fprintf(
        out,
        "controller response after a load step: the reported SM clock never fell 5%% under its "
        "maximum\n");
  }
  std::fprintf(out,
               "power window: compute phases up to %.0f ms run unthrottled (within 3%% of boost) "
               "between %s gaps at %.0f%% duty\n",
               c.power_window_ms, gap.c_str(), c.duty * 100);
}

}  // namespace powershape::experiment
