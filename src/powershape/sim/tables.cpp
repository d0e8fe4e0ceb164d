#include "powershape/sim/tables.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace powershape::sim {

void print_run(std::FILE* out, const workload::Plan& plan, const SimResult& r) {
  const int iters = r.run.iterations;
  const double secs = static_cast<double>(r.run.end_ns - r.run.begin_ns) * 1e-9;
  std::fprintf(
      out,
      " workload: %d iterations in %.3f s: %.3f ms and %.2f J per iteration, %.1f TFLOP/s, "
      "real SM clock mean %.0f MHz, model die %.1f C at the end of the run (the reported "
      "temperature is the sensor's)\n",
      iters, secs, secs / iters * 1e3, r.run.energy_j / iters,
      plan.total_flops() * iters / secs * 1e-12, r.run.mean_clock_mhz, r.end_temp_c);
}

void print_calibration(std::FILE* out, const Calibration& c, const std::string& recorded_by) {
  // One width for every table's names, so that each column lines up under its heading.
  int w = 50;
  for (const auto& t : c.after) w = std::max(w, static_cast<int>(t.name.size()));
  std::fprintf(out, "%-*s %10s %10s %8s %10s %8s\n", w, "figure", "measured", "before", "error",
               "after", "error");
  for (std::size_t i = 0; i < c.after.size(); ++i) {
    const auto& b = c.before[i];
    const auto& t = c.after[i];
    const int digits = t.measured < 10 ? 3 : 1;  // a ratio to one chunk shows its third place
    std::fprintf(out, "%-*s %10.*f %10.*f %+7.1f%% %10.*f %+7.1f%%\n", w, t.name.c_str(), digits,
                 t.measured, digits, b.simulated, b.error() * 100, digits, t.simulated,
                 t.error() * 100);
  }
  std::fprintf(out, "%-*s %10s %10.2f %8s %10.2f\n", w, "temperature RMS error C (every reading)",
               "", c.thermal_rms_before_c, "", c.thermal_rms_after_c);
  if (const auto rb = summarize_ratios(c.before), ra = summarize_ratios(c.after); ra.count > 0) {
    std::fprintf(
        out,
        "  chunk ratios (%d): before %d within 0.5 point of the GPU's, %d on its side of 1, "
        "%.2f points off on average, 9 in 10 within %.2f; after %d, %d, %.2f, %.2f "
        "(accuracy.chunk_ratio_points)\n",
        ra.count, rb.within_half_point, rb.same_side, rb.mean_points, rb.p90_points,
        ra.within_half_point, ra.same_side, ra.mean_points, ra.p90_points);
    if (ra.several_runs > 0) {
      std::fprintf(
          out,
          "  ratios measured in more than one run (%d): the runs of one span up to %.2f points; "
          "the fitted model lies within half a point of their span for %d",
          ra.several_runs, ra.widest_run_range_points,
          ra.several_runs - static_cast<int>(ra.outside_runs.size()));
      for (std::size_t i = 0; i < ra.outside_runs.size(); ++i)
        std::fprintf(out, "%s%s", i == 0 ? " (not: " : ", ", ra.outside_runs[i].c_str());
      std::fprintf(out, "%s\n", ra.outside_runs.empty() ? "" : ")");
    }
  }
  // How far memory kernels run above the products around them, on the card and in the model.
  double swing_card = 0, swing_model = 0;
  int configs = 0;
  for (std::size_t i = 0; i + 1 < c.after.size(); ++i) {
    if (is_phase_clock(c.after[i]) && is_phase_clock(c.after[i + 1])) {
      swing_card += c.after[i + 1].measured - c.after[i].measured;
      swing_model += c.after[i + 1].simulated - c.after[i].simulated;
      ++configs;
      ++i;
    }
  }
  if (configs > 0)
    std::fprintf(
        out,
        "  real MHz of products and memory kernels (the clock probe beside each kernel): shown, "
        "not fitted: memory kernels run %+.0f MHz from the products on the card, %+.0f in the "
        "model, which runs every phase under one clock cap\n",
        swing_card / configs, swing_model / configs);
  for (const auto& t : c.after) {
    // A figure the fit could not move says why, not only that it did not.
    if (t.name == "step response ms" && t.simulated < 1)
      std::fprintf(
          out,
          "  step response: the model's clock leaves 1700 MHz within its first sensor update, "
          "where "
          "the card held its boost %.0f ms: the model has no boost hold before its power loop acts "
          "(a difference of the model, not of a fitted figure; docs/sim.md)\n",
          t.measured);
    else if (t.name == "step response ms" && std::abs(t.error()) > 0.1)
      std::fprintf(
          out,
          "  step response: measured between two NVML readings that update every ~100 ms (here "
          "from the first power reading over 400 W, which updates with the clock), it moves only "
          "in the sensor's steps; a recording that marks the load's start (%s) "
          "measures it from there\n",
          recorded_by.c_str());
  }
  if (!c.squares_after.empty()) {
    std::fprintf(out, "\n%-*s %10s %10s %8s %10s %8s\n", w,
                 "other square waves (shown, not fitted)", "measured", "before", "error", "after",
                 "error");
    int within = 0;
    double worst = 0;
    for (std::size_t i = 0; i < c.squares_after.size(); ++i) {
      const auto& b = c.squares_before[i];
      const auto& t = c.squares_after[i];
      std::fprintf(out, "%-*s %10.1f %10.1f %+7.1f%% %10.1f %+7.1f%%\n", w, t.name.c_str(),
                   t.measured, b.simulated, b.error() * 100, t.simulated, t.error() * 100);
      within += std::abs(t.error()) <= 0.03;
      worst = std::max(worst, std::abs(t.error()));
    }
    std::fprintf(out, "  after: %d of %zu within 3%%, the worst %.1f%% off\n", within,
                 c.squares_after.size(), worst * 100);
  }
  if (!c.kernels_after.empty()) {
    std::fprintf(out, "\n%-*s %10s %10s %8s %10s %8s\n", w, "kernels (each timed alone)",
                 "measured", "before", "error", "after", "error");
    for (std::size_t i = 0; i < c.kernels_after.size(); ++i) {
      const auto& b = c.kernels_before[i];
      const auto& t = c.kernels_after[i];
      std::fprintf(out, "%-*s %10.2f %10.2f %+7.1f%% %10.2f %+7.1f%%\n", w, t.name.c_str(),
                   t.measured, b.simulated, b.error() * 100, t.simulated, t.error() * 100);
    }
    const auto& q = c.profile;
    std::fprintf(
        out, "fitted kernels: launch %.1f us, epilogue exposed up to k = %.0f, memory efficiency",
        q.kernel_launch_us, q.epilogue_k);
    for (const auto& [k, v] : q.memory_efficiency) std::fprintf(out, " %s %.3f", k.c_str(), v);
    if (q.issue_activity > 0) std::fprintf(out, ", issue-bound SM activity %.2f", q.issue_activity);
    std::fprintf(out, "\n");
  }
  const auto& q = c.profile;
  std::fprintf(
      out,
      "\nfitted: flops_per_cycle %.0f, dynamic_w %.1f, fast_limit_w %.1f, window_ms %.1f, "
      "gain_mhz_per_w_s %.3f, recovery_mhz_per_s %.0f, memory_w %.0f, memory_phase_activity %.2f; "
      "thermal r_die %.4f C/W tau_die %.2f s "
      "r_sink %.4f C/W "
      "tau_sink %.1f s, ambient %.1f C\n",
      q.flops_per_cycle, q.dynamic_w, q.fast_limit_w, q.window_ms, q.gain_mhz_per_w_s,
      q.recovery_mhz_per_s, q.memory_w, q.memory_phase_activity, q.r_die_c_per_w, q.tau_die_s,
      q.r_sink_c_per_w, q.tau_sink_s, q.ambient_c);
  if (q.medium_gain_mhz_per_w_s > 0)
    std::fprintf(out, "fitted medium loop: window_ms %.1f, gain_mhz_per_w_s %.1f\n",
                 q.medium_window_ms, q.medium_gain_mhz_per_w_s);
}

}  // namespace powershape::sim
