#include "powershape/shape/floor_controller.hpp"

#include <algorithm>
#include <cmath>

#include "powershape/util/error.hpp"

namespace powershape::shape {

Floor parse_floor(const std::string& text) {
  Floor f;
  f.share = !text.empty() && text.back() == '%';
  const std::string number = f.share ? text.substr(0, text.size() - 1) : text;
  std::size_t used = 0;
  try {
    f.value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (number.empty() || used != number.size() || !std::isfinite(f.value) || !(f.value > 0) ||
      f.value > (f.share ? 100 : 1e5))
    throw invalid_input("floor", "'" + text + "' is not W (0-100000) or N% (0-100)");
  return f;
}

double floor_watts(const Floor& f, const telemetry::DeviceInfo& gpu) {
  if (!f.share) return f.value;
  if (!gpu.power_limit_mw.ok())
    throw invalid_input("floor", "GPU " + std::to_string(gpu.index) +
                                     " does not give its power limit; give the floor in W");
  return f.value / 100 * static_cast<double>(gpu.power_limit_mw.value) * 1e-3;
}
namespace {

// A learned intensity never reaches 0: a gap that starts at 0 would never fill, and nothing would
// teach it otherwise.
constexpr double kLeastLearned = 0.02;
// The longest a ramp may take: at most an hour up (floor / ramp), the same down from at most four
// floors.
constexpr double kLongestRampS = 3600;

bool in(double x, double lo, double hi) { return std::isfinite(x) && x >= lo && x <= hi; }

}  // namespace

FloorController::FloorController(FloorOptions o) : o_(o), learned_(o.start_intensity) {
  if (!in(o_.floor_w, 1e-3, 1e5))
    throw invalid_input("floor: expected watts above 0, at most 100000");
  if (!(o_.ramp_w_per_s == 0 || in(o_.ramp_w_per_s, o_.floor_w / kLongestRampS, 1e9)))
    throw invalid_input(
        "ramp: expected 0 (none) or W/s at which the floor is reached within an hour");
  if (!in(o_.back_off_w, 0, 1e5)) throw invalid_input("back-off: expected watts from 0 to 100000");
  if (o_.back_off_w == 0) o_.back_off_w = o_.floor_w / 10;
  if (!(o_.gain > 0 && o_.gain <= 2))
    throw invalid_input("gain: expected a number above 0, at most 2");
  if (!in(o_.start_intensity, 0, 1)) throw invalid_input("start intensity: expected 0 to 1");
  if (!in(static_cast<double>(o_.long_low_ns), 1e6, 6e10))
    throw invalid_input("long low phase: expected 1 ms to 60 s");
  learned_ = std::max(kLeastLearned, o_.start_intensity);
}

void FloorController::ramp_up(int64_t t_ns, double from_w) {
  phase_ = Phase::kRampUp;
  ramp_t0_ = t_ns;
  ramp_from_w_ = std::clamp(std::isfinite(from_w) ? from_w : 0.0, 0.0, o_.floor_w);
  ramp_x_ = 0;
  filling_ = false;
}

void FloorController::ramp_down(int64_t t_ns, double from_w) {
  phase_ = Phase::kRampDown;
  ramp_t0_ = t_ns;
  ramp_from_w_ = std::clamp(std::isfinite(from_w) ? from_w : 0.0, o_.floor_w, 4 * o_.floor_w);
  // The floor's intensity scaled to the starting power, as if power were proportional to it: a
  // little short, since idle power comes free; the integral takes it from there.
  ramp_x_ = std::min(1.0, learned_ * ramp_from_w_ / o_.floor_w);
  filling_ = false;
}

double FloorController::target_w(int64_t t_ns) const {
  const double s = static_cast<double>(std::max<int64_t>(0, t_ns - ramp_t0_)) * 1e-9;
  switch (phase(t_ns)) {
    case Phase::kRampUp:
      return std::min(o_.floor_w, ramp_from_w_ + o_.ramp_w_per_s * s);
    case Phase::kJob:
      // A long low phase falls from the job's level at the ramp's pace.
      if (long_low_ && o_.ramp_w_per_s > 0)
        return std::max(
            o_.floor_w,
            low_from_w_ -
                o_.ramp_w_per_s * static_cast<double>(std::max<int64_t>(0, t_ns - low_t0_)) * 1e-9);
      return o_.floor_w;
    case Phase::kRampDown:
      return std::max(0.0, ramp_from_w_ - o_.ramp_w_per_s * s);
    case Phase::kDone:
      break;
  }
  return 0;
}

FloorController::Phase FloorController::phase(int64_t t_ns) const {
  if (phase_ == Phase::kRampUp || phase_ == Phase::kRampDown) {
    const double s = static_cast<double>(std::max<int64_t>(0, t_ns - ramp_t0_)) * 1e-9;
    const double span_w = phase_ == Phase::kRampUp ? o_.floor_w - ramp_from_w_ : ramp_from_w_;
    if (o_.ramp_w_per_s == 0 || o_.ramp_w_per_s * s >= span_w)
      return phase_ == Phase::kRampUp ? Phase::kJob : Phase::kDone;
  }
  return phase_;
}

bool FloorController::tracking(int64_t t_ns) const {
  const Phase p = phase(t_ns);
  return p == Phase::kRampUp || p == Phase::kRampDown ||
         (p == Phase::kJob && long_low_ && target_w(t_ns) > o_.floor_w);
}

void FloorController::observe(int64_t t_ns, double watts, double ran) {
  if (!(std::isfinite(watts) && watts >= 0)) return;
  const Phase now = phase(t_ns);
  if (now == Phase::kDone) return;
  if (now == Phase::kJob) {
    // The job's level: its power averaged over about a second.
    const double a =
        last_t_ < 0
            ? 1.0
            : 1 - std::exp(-static_cast<double>(std::max<int64_t>(0, t_ns - last_t_)) * 1e-9);
    level_w_ += a * (watts - level_w_);
    last_t_ = t_ns;
  }
  const double target = target_w(t_ns);
  if (now == Phase::kJob && !(o_.marked && marks_seen_)) {
    filling_ = filling_ ? watts <= target + o_.back_off_w : watts < target;
    if (!filling_) return;  // the job's own power, not the filler's
  } else if (now == Phase::kJob) {
    if (long_low_ && watts > target + o_.back_off_w) {
      long_low_ = false;  // the job's own power: it is back
      below_since_ = -1;
      return;
    }
    if (watts >= target) {
      below_since_ = -1;
    } else if (below_since_ < 0) {
      below_since_ = t_ns;
      low_from_w_ = level_w_;
    } else if (!long_low_ && t_ns - below_since_ >= o_.long_low_ns) {
      long_low_ = true;
      low_t0_ = below_since_;
      ramp_x_ = std::min(1.0, learned_ * target_w(t_ns) / o_.floor_w);
    }
  }
  // Only a reading of the intensity that would run now teaches.
  const double running = tracking(t_ns) ? ramp_x_ : learned_;
  if (!(ran == running) || (!tracking(t_ns) && ran == 0)) return;
  pending_error_w_ += target - watts;
  ++pending_;
}

double FloorController::decide(int64_t now_ns, bool in_gap) {
  const Phase now = phase(now_ns);
  if (now != phase_) {
    // A ramp up that reached the floor found the floor's intensity on the way.
    if (phase_ == Phase::kRampUp && ramp_x_ > 0) learned_ = std::max(kLeastLearned, ramp_x_);
    pending_ = 0;  // readings of the phase before
    pending_error_w_ = 0;
    phase_ = now;
  }
  // A long low phase's fall that reached the floor found the floor's intensity on the way too.
  if (tracked_ && !tracking(now_ns) && now == Phase::kJob && long_low_ && ramp_x_ > 0)
    learned_ = std::max(kLeastLearned, ramp_x_);
  tracked_ = tracking(now_ns);
  if (now == Phase::kJob && o_.marked && (in_gap || marks_seen_)) {
    marks_seen_ = true;
    filling_ = in_gap || long_low_;
  }
  if (pending_ > 0) {
    const double step = o_.gain * pending_error_w_ / static_cast<double>(pending_) / o_.floor_w;
    if (tracking(now_ns)) {
      ramp_x_ = std::clamp(ramp_x_ + step, 0.0, 1.0);
    } else {
      learned_ = std::clamp(learned_ + step, kLeastLearned, 1.0);
    }
  }
  pending_ = 0;
  pending_error_w_ = 0;
  if (tracking(now_ns)) return ramp_x_;
  if (now == Phase::kJob && filling_) return learned_;
  return 0;
}

}  // namespace powershape::shape
