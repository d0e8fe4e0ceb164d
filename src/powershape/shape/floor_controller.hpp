#pragma once
// The power floor's controller (`powershape smooth`): from a GPU's power readings, and the job's
// marks where it gives them, it says how hard the filler should run so that the GPU's power stays
// at or above a floor through the job's low phases, and moves that floor at a limited rate before
// the job starts and after it ends. Pure: it sees readings and returns intensities, so that every
// decision is tested without a GPU.
//
// While the job runs:
// - with marks (a region the job puts around its gaps), it fills inside the region, exactly, from
//   the first mark on; before it (a job's start-up: imports, loading) as without; after it, a
//   phase outside the marks that stays below the floor for `long_low_ns` (a checkpoint, the job's
//   teardown) is filled too, until the power rises `back_off_w` above the floor; with a ramp, from
//   the job's level (its power over about the second before), falling at the ramp's pace;
// - without, a reading below the floor starts the filler, and a reading more than `back_off_w`
//   above it says the job's own work is back and stops it.
// While it fills, the intensity follows the error integrally, and what it learned carries into
// the next gap: each gap starts where the last one left off. Readings arrive late and in batches
// (a driver's buffer drained every few tens of ms), so each comes with the intensity the filler
// ran at over the time it covers (or none, where that changed or the job's own work may be in
// it), and teaches only about that intensity; each decision takes one integral step, from the
// mean error of the readings since the last: a step a reading would count one error many times.
#include <cstdint>
#include <string>

#include "powershape/telemetry/device_info.hpp"

namespace powershape::shape {

// A floor as written: "W" (up to 100,000) or "N%" of the power limit (up to 100). Throws
// invalid_input naming the floor otherwise.
struct Floor {
  double value = 0;
  bool share = false;  // of the power limit
};
Floor parse_floor(const std::string& text);
// In W on `gpu`; a share needs the GPU's power limit, and throws where it does not give it.
double floor_watts(const Floor& f, const telemetry::DeviceInfo& gpu);

struct FloorOptions {
  double floor_w = 0;       // the power held while the job's own is below it, W (> 0)
  double ramp_w_per_s = 0;  // > 0: the floor rises from the power found to floor_w before the job,
                            // and falls from the job's power to 0 after it, this fast
  double back_off_w = 0;    // unmarked, filling: a reading this far above the floor means the job
                            // is back (0: a tenth of the floor)
  bool marked = false;      // the job marks its gaps (decide's in_gap); else they are found in
                            // the power
  double gain = 0.5;        // the integral step, per unit of relative error (0-2]
  double start_intensity = 0.5;       // the first gap's, before anything is learned
  int64_t long_low_ns = 250'000'000;  // marked: an unmarked low phase this long is filled too
};

class FloorController {
 public:
  // Throws invalid_input naming the floor, the ramp, the back-off, the gain, the start intensity
  // or the long low phase.
  explicit FloorController(FloorOptions o);

  enum class Phase { kRampUp, kJob, kRampDown, kDone };
  // The floor rises from `from_w` (the power found) to floor_w from t_ns on, then the job's phase
  // begins; at once without a ramp.
  void ramp_up(int64_t t_ns, double from_w);
  // The job ended at t_ns, its power over its last second `from_w`: the floor falls from the
  // larger of it and floor_w to 0, then the controller is done.
  void ramp_down(int64_t t_ns, double from_w);
  // One power reading taken at t_ns, in the order taken; `ran`: the intensity the filler ran at
  // throughout the time the reading covers, with only the filler's power in it, else NaN. A
  // reading that is no number is ignored.
  void observe(int64_t t_ns, double watts, double ran);
  // The intensity to run from now_ns on; `in_gap`: whether the job is inside its marked gap now
  // (read only when marked).
  double decide(int64_t now_ns, bool in_gap = false);

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
  bool marks_seen_ = false;   // marked: the job has opened its first gap
  bool long_low_ = false;     // marked: filling a long low phase outside the marks
  int64_t below_since_ = -1;  // marked: the first of the readings below the floor in a row
  double level_w_ = 0;        // the job's power, averaged over about a second
  int64_t last_t_ = -1;       // its last reading
  double low_from_w_ = 0;     // the level when the low phase began
  int64_t low_t0_ = 0;        // and when
  double learned_;            // the floor's intensity
  // Whether the target moves at t (a ramp, a long low phase's fall): the intensity that tracks it
  // is ramp_x_, not the floor's.
  bool tracking(int64_t t_ns) const;
  double ramp_x_ = 0;           // the ramps' intensity, which tracks a moving target
  bool tracked_ = false;        // at the last decision
  double pending_error_w_ = 0;  // readings since the last decision that teach: target - W, summed
  int pending_ = 0;             // and counted
};

}  // namespace powershape::shape
