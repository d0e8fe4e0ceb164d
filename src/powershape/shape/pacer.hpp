#pragma once
// The job's own rise, paced (`powershape smooth --ramp R --pace`): a filler can lift a GPU's
// power but never lower it, so a job that starts (or comes back from a checkpoint) at full power
// ramps as fast as its first kernels do. The pacer holds the job (its process group stopped,
// the GPU left to drain what was queued) while its power would rise faster than the ramp
// allows: the power's mean over the last window (the window `swing` measures a ramp over) is kept
// under a ceiling that rises at the ramp from where the power left the floor. It is armed while
// that mean sits at the floor (the job not yet at work, or a checkpoint) and disarms once a whole
// window has passed without a hold: the ceiling rises whether or not the job is held, so pacing
// ends within (the job's level - the floor) / ramp + a window, and a job at its level is not held
// for its steps' own ripple, which no pacing of its start could smooth. A held job's GPU runs on
// through the kernels it had queued (up to a step when the job synchronises once a step): the
// pacer learns that drain from when the readings fall after each hold, counts the job's power
// through it, and holds when the mean a drain ahead would pass the ceiling. What the readings
// show late, and the first hold's drain before one was seen, pass unpaced.
// Pure: it sees readings and says hold or run, so each decision is tested without a job.
#include <cstdint>
#include <deque>
#include <utility>

namespace powershape::shape {

struct PacerOptions {
  double ramp_w_per_s = 0;            // > 0
  int64_t window_ns = 1'000'000'000;  // the ramp's window (the grid spec's), > 0
  double armed_below_w = 0;           // a window's mean at or below this arms the pacer (the
                                      // floor plus its back-off), >= 0
};

class Pacer {
 public:
  // Throws invalid_input naming the ramp, the window or the arming level.
  explicit Pacer(PacerOptions o);
  // One power reading, in the order taken; a reading that is no number is ignored.
  void observe(int64_t t_ns, double watts);
  // Whether the job should be held from now on.
  bool hold(int64_t now_ns);
  bool armed() const { return armed_; }
  // How long a held job's power has been seen to run on (what it learned), ns.
  int64_t drain_ns() const { return drain_ns_; }

 private:
  PacerOptions o_;
  // The window up to the last reading, not to now: what has not arrived yet is not a fall.
  std::deque<std::pair<int64_t, double>> readings_;
  bool armed_ = true;          // a job starts from the floor
  double ceiling_w_;           // armed: the most the window's mean may be now
  int64_t last_ns_ = -1;       // the last decision
  int64_t last_hold_ns_ = -1;  // the last decision to hold
  int64_t calm_since_ = -1;    // armed, above the floor: the first decision since without a hold
  std::deque<std::pair<int64_t, bool>> decisions_;  // when it changed, held or not
  int64_t hold_t0_ = -1;  // the last hold's start, until the readings show its fall
  int64_t drain_ns_ = 0;  // how long a held job's power runs on
  // The window's mean power now, the readings' lag filled in from the decisions (readings_ not
  // empty).
  double window_mean(int64_t now_ns);  // and sets high_w_
  double high_w_ = 0;                  // the window's highest reading: the job's power running
  bool decide(double mean_w, int64_t since_ns, int64_t now_ns);
};

}  // namespace powershape::shape
