#include "powershape/analysis/swing_print.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace powershape::analysis {
namespace {

// W with the prefix that keeps 3-4 digits: "612 W", "4.90 kW", "70.0 MW".
std::string watts(double w, const char* unit = "W") {
  const char* prefix[] = {"", "k", "M", "G"};
  int p = 0;
  double v = w;
  while (std::abs(v) >= 1000 && p < 3) {
    v /= 1000;
    ++p;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, std::abs(v) >= 100 ? "%.0f %s%s" : "%.3g %s%s", v, prefix[p],
                unit);
  return buf;
}

std::string band_name(double lo, double hi) {
  char buf[48];
  if (lo == 0)
    std::snprintf(buf, sizeof buf, "below %g Hz", hi);
  else if (!std::isfinite(hi))
    std::snprintf(buf, sizeof buf, "above %g Hz", lo);
  else
    std::snprintf(buf, sizeof buf, "%g-%g Hz", lo, hi);
  return buf;
}

}  // namespace

void print_swing(std::FILE* out, const analysis::Swing& s, const analysis::GridSpec& spec) {
  std::fprintf(out, "power    mean %s, min %s, max %s", watts(s.mean_w).c_str(),
               watts(s.min_w).c_str(), watts(s.max_w).c_str());
  if (s.rated_w > 0) std::fprintf(out, " (rated %s)", watts(s.rated_w).c_str());
  std::fprintf(out, "\n");
  if (s.period_s > 0)
    std::fprintf(out, "period   %.3g s (%.3g Hz)\n", s.period_s, 1 / s.period_s);
  else
    std::fprintf(out, "period   none found\n");
  std::fprintf(out, "ramp     up %s, down %s, p99 %s (mean over %g s against the %g s before)\n",
               watts(s.ramp.up_max_w_per_s, "W/s").c_str(),
               watts(s.ramp.down_max_w_per_s, "W/s").c_str(),
               watts(s.ramp.p99_w_per_s, "W/s").c_str(), s.ramp_window_s, s.ramp_window_s);
  std::fprintf(out, "range    %s inside %g s", watts(s.range_w).c_str(), s.range_window_s);
  if (s.rated_w > 0) std::fprintf(out, " (%.0f%% of rated)", 100 * s.range_w / s.rated_w);
  std::fprintf(out, "\nspectrum the variation's energy (Welch, %.3g Hz bins):", s.spectrum.df_hz);
  for (const auto& b : s.overview)
    std::fprintf(out, " %s %.0f%%,", band_name(b.band.lo_hz, b.band.hi_hz).c_str(), 100 * b.share);
  std::fprintf(out, " seen to %.3g Hz\n", s.spectrum.nyquist_hz());
  std::fprintf(out, "limits of %s%s\n", spec.name.empty() ? "the spec" : spec.name.c_str(),
               spec.source.empty() ? "" : (" (" + spec.source + ")").c_str());
  int failed = 0, unknown = 0;
  for (const auto& v : s.verdicts) {
    auto show = [&](double x) {
      return v.unit == "share" ? std::to_string(static_cast<int>(std::lround(100 * x))) + "%"
                               : watts(x, v.unit.c_str());
    };
    const char* word = !v.known ? "UNKNOWN" : v.pass ? "pass" : "FAIL";
    failed += v.known && !v.pass;
    unknown += !v.known;
    std::fprintf(out, "  %-16s %-8s %10s  limit %s%s%s\n", v.limit.c_str(), word,
                 show(v.measured).c_str(), std::isfinite(v.allowed) ? show(v.allowed).c_str() : "?",
                 v.note.empty() ? "" : ("; " + v.note).c_str(),
                 v.source.empty() ? "" : (" [" + v.source + "]").c_str());
  }
  std::fprintf(out, "verdict: %s\n",
               failed > 0 ? (std::to_string(failed) + " of " + std::to_string(s.verdicts.size()) +
                             " limits exceeded")
                                .c_str()
               : unknown > 0 ? "within every limit that could be checked"
                             : "within every limit");
}

void print_fold(std::FILE* out, const analysis::Fold& f, const std::string& region, double dt_s) {
  std::fprintf(
      out,
      "through a region: the power in each %g ms of '%s' (%zu of them, %.1f ms each at the "
      "median), each sample (a %.3g ms mean) at its time since its region began\n",
      f.bin_s * 1e3, region.c_str(), f.regions, f.median_length_s * 1e3, dt_s * 1e3);
  std::fprintf(out, "  %8s %10s %10s %10s %10s %10s %6s\n", "from", "min", "p10", "median", "p90",
               "max", "n");
  for (const auto& b : f.bins)
    std::fprintf(out, "  %5.4g ms %10s %10s %10s %10s %10s %6zu\n", b.from_s * 1e3,
                 watts(b.min_w).c_str(), watts(b.p10_w).c_str(), watts(b.median_w).c_str(),
                 watts(b.p90_w).c_str(), watts(b.max_w).c_str(), b.n);
}

void print_swing_inputs(std::FILE* out, const PowerInput& in, const Swing& s, std::size_t files,
                        int64_t fleet) {
  const std::string gpus = in.gpus == 0
                               ? std::string("a meter")
                               : std::to_string(in.gpus) + (in.gpus == 1 ? " GPU" : " GPUs");
  std::fprintf(out, "powershape swing: %zu recording%s (%s, %s), %.1f s at %.3g ms\n", files,
               files == 1 ? "" : "s", in.signal.c_str(), gpus.c_str(), s.duration_s, s.dt_s * 1e3);
  if (in.aligned_by_start)
    std::fprintf(out, "  no wall clock in every recording: they are lined up at their starts\n");
  if (s.scale != 1)
    std::fprintf(out,
                 "  scaled x%g to a fleet of %lld GPUs, all in step (the synchronous worst case)\n",
                 s.scale, static_cast<long long>(fleet));
}

}  // namespace powershape::analysis
