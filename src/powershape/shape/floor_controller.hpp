#pragma once
// The power floor's controller (`powershape smooth`): from a GPU's power readings, and the job's
// marks where it gives them, it says how hard the filler should run so that the GPU's power stays
// at or above a floor through the job's low phases, and moves that floor at a limited rate before
// the job starts and after it ends. Pure: it sees readings and returns intensities, so that every
// decision is tested without a GPU.
//
// While the job runs:
// - with marks (a region the job puts around its gaps), it fills inside the region, exactly;
// - without, a reading below the floor starts the filler, and a reading more than `back_off_w`
//   above it, or the intensity's fall to 0, says the job's own work is back and stops it.
// While it fills, the intensity follows the error integrally (a step of gain * (floor - P) / floor
// a reading: small, since a reading may lag the power by a few readings), and what it learned carries into the next gap: the filler starts each gap where the
// last one left it. Readings within `settle_ns` of a start still show the power before it and
// teach nothing.
#include <cstdint>
#include <optional>

namespace powershape::shape {

struct FloorOptions {
  double floor_w = 0;       // the power held while the job's own is below it, W (> 0)
  double ramp_w_per_s = 0;  // > 0: the floor rises from the power found to floor_w before the job,
                            // and falls from the job's last power to 0 after it, this fast
  double back_off_w = 0;    // filling, a reading this far above the floor means the job is back
                            // (0: a tenth of the floor)
  double gain = 0.25;       // the integral step per reading, per unit of relative error (0-2]
  double start_intensity = 0.5;   // the first gap's, before anything is learned
  int64_t settle_ns = 20'000'000;  // readings this soon after the filler starts teach nothing
};

class FloorController {
 public:
  // Throws invalid_input naming the floor, the ramp, the back-off, the gain or the start intensity.
  explicit FloorController(FloorOptions o);

  enum class Phase { kRampUp, kJob, kRampDown, kDone };
  // The floor rises from `from_w` (the power found) to floor_w from t_ns on, then the job's phase
  // begins; at once without a ramp.
  void ramp_up(int64_t t_ns, double from_w);
  // The job ended at t_ns, its power over its last second `from_w`: the floor falls from the larger of it
  // and floor_w to 0, then the controller is done.
  void ramp_down(int64_t t_ns, double from_w);
  // One power reading at t_ns; `in_gap`: whether the job is inside its marked gap, or nullopt
  // when it marks none. Returns the intensity to run now.
  double update(int64_t t_ns, double watts, std::optional<bool> in_gap);

  // The floor at t_ns (the ramps included), W.
  double target_w(int64_t t_ns) const;
  Phase phase(int64_t t_ns) const;
  // The intensity learned for the floor (what the next gap starts at).
  double learned() const { return learned_; }
  const FloorOptions& options() const { return o_; }

 private:
  FloorOptions o_;
  Phase phase_ = Phase::kJob;
  int64_t ramp_t0_ = 0;
  double ramp_from_w_ = 0;
  bool filling_ = false;
  int64_t filling_since_ = 0;
  double learned_;  // the floor's intensity
  double ramp_x_ = 0;  // the ramps' intensity, which tracks a moving target
};

}  // namespace powershape::shape
