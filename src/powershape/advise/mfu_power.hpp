#pragma once
// GPU power linear in model-FLOPs utilisation while compute-bound: P = idle + k x MFU. Fitted on
// what a recording measured (probe --record's conditions, or data/h200's summaries), on the
// points where it should hold (neither at the power cap nor with memory-bound gaps), and
// reported on every point, so where it breaks shows: at the cap power stops rising with MFU, and
// a memory stream draws power that no FLOP counts.
#include <string>
#include <vector>

namespace powershape::advise {

struct MfuPoint {
  std::string name;
  double mfu = 0;           // achieved FLOP/s over the condition / the peak
  double power_w = 0;       // its average power
  double power_capped = 0;  // fraction of its time at the power cap
  bool memory = false;      // its gaps stream memory
};

// The conditions of a recording folder with what the fit needs: probe --record's
// conditions.json (idle, sustained and square-wave conditions), or data/h200's
// square_wave_idle_summary.json and sustained_60s_summary.json. MFU against `peak_flops_per_s`.
// Throws std::runtime_error naming the folder and what it lacks.
std::vector<MfuPoint> read_mfu_points(const std::string& dir, double peak_flops_per_s);

struct MfuModel {
  double idle_w = 0, w_per_mfu = 0;  // P = idle_w + w_per_mfu x MFU
  int fitted_on = 0;
  double rms_w = 0;  // over the points it was fitted on
  double predict_w(double mfu) const { return idle_w + w_per_mfu * mfu; }
};

// The least span of MFU the fitted points must cover for a slope to mean anything.
inline constexpr double kMinMfuSpread = 0.1;

// Least squares on the points neither capped (power_capped < cap_share) nor with memory gaps.
// Throws std::runtime_error with fewer than 2 such points or MFUs spanning under kMinMfuSpread.
MfuModel fit_mfu(const std::vector<MfuPoint>& points, double cap_share = 0.2);

}  // namespace powershape::advise
