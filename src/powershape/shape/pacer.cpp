#include "powershape/shape/pacer.hpp"

#include <algorithm>
#include <cmath>

#include "powershape/util/error.hpp"

namespace powershape::shape {
namespace {

// The readings come tens of ms late (the driver's buffer, drained every 40 ms) and the GPU drains
// the kernels queued before a hold: the pacer holds a fifth below the ramp so that what arrives
// after the decision stays within it.
constexpr double kLead = 0.8;
// Above the power at the floor, the ceiling starts this share of a window's rise higher: the
// floor's own noise holds nothing.
constexpr double kNoise = 0.1;

}  // namespace

Pacer::Pacer(PacerOptions o) : o_(o), ceiling_w_(o.armed_below_w) {
  if (!(std::isfinite(o_.ramp_w_per_s) && o_.ramp_w_per_s > 0 && o_.ramp_w_per_s <= 1e9))
    throw invalid_input("ramp: expected W/s above 0, at most 1e9");
  if (!(o_.window_ns >= 1'000'000 && o_.window_ns <= 3'600'000'000'000))
    throw invalid_input("ramp window: expected 1 ms to an hour");
  if (!(std::isfinite(o_.armed_below_w) && o_.armed_below_w >= 0 && o_.armed_below_w <= 1e5))
    throw invalid_input("floor: expected watts from 0 to 100000");
}

void Pacer::observe(int64_t t_ns, double watts) {
  if (std::isnan(watts)) return;
  // The first reading after a hold's start that is nearer the floor than the job's power: the
  // GPU has drained what the job had queued.
  if (hold_t0_ >= 0 && t_ns > hold_t0_ && !readings_.empty()) {
    double high = 0;
    for (const auto& [t, w] : readings_) high = std::max(high, w);
    if (watts < (high + o_.armed_below_w) / 2) {
      const int64_t seen = std::min(t_ns - hold_t0_, o_.window_ns / 2);
      drain_ns_ = drain_ns_ == 0 ? seen : (drain_ns_ + seen) / 2;
      hold_t0_ = -1;
    }
  }
  readings_.emplace_back(t_ns, watts);
  while (readings_.front().first < t_ns - o_.window_ns) readings_.pop_front();
}

double Pacer::window_mean(int64_t now_ns) {
  double sum = 0, high = 0;
  for (const auto& [t, w] : readings_) {
    sum += w;
    high = std::max(high, w);
  }
  high_w_ = high;
  const auto n = static_cast<double>(readings_.size());
  // What the readings have not shown yet is what the pacer decided then: the job's power where
  // it ran (the window's highest reading: a hold comes no later for it) and through a hold's
  // first drain_ns_, the floor's for the rest of a hold. Without this, the readings' lag and the
  // queued kernels would let the mean swing past the ceiling and back.
  const int64_t last = readings_.back().first;
  if (now_ns <= last || n < 2) return sum / n;
  const double per_ns = (n - 1) / static_cast<double>(last - readings_.front().first + 1);
  double unseen = 0;
  for (std::size_t i = 0; i < decisions_.size(); ++i) {
    const int64_t from = std::max(last, decisions_[i].first);
    const int64_t to = i + 1 < decisions_.size() ? decisions_[i + 1].first : now_ns;
    if (to <= from) continue;
    const double k = static_cast<double>(to - from) * per_ns;
    double running = k;
    if (decisions_[i].second) {
      const int64_t drained = decisions_[i].first + drain_ns_;
      running = static_cast<double>(std::clamp(drained, from, to) - from) * per_ns;
    }
    sum += running * high + (k - running) * o_.armed_below_w;
    unseen += k;
  }
  return sum / (n + unseen);
}

bool Pacer::hold(int64_t now_ns) {
  const int64_t since = last_ns_ < 0 ? 0 : now_ns - last_ns_;
  last_ns_ = now_ns;
  if (readings_.empty()) return false;
  const double mean_w = window_mean(now_ns);
  const bool held = decide(mean_w, since, now_ns);
  if (decisions_.empty() || decisions_.back().second != held) {
    if (held) {
      hold_t0_ = now_ns;
    } else if (hold_t0_ >= 0) {
      // Let go before its fall was seen: the drain is at least what the readings showed of the
      // hold without a fall (what they have not shown yet says nothing).
      if (readings_.back().first > hold_t0_)
        drain_ns_ =
            std::max(drain_ns_, std::min(readings_.back().first - hold_t0_, o_.window_ns / 2));
      hold_t0_ = -1;
    }
    decisions_.emplace_back(now_ns, held);
  }
  while (decisions_.size() > 1 && decisions_[1].first <= readings_.back().first)
    decisions_.pop_front();
  return held;
}

bool Pacer::decide(double mean_w, int64_t since, int64_t now_ns) {
  const double per_window_w = o_.ramp_w_per_s * static_cast<double>(o_.window_ns) * 1e-9;
  ceiling_w_ += kLead * o_.ramp_w_per_s * static_cast<double>(since) * 1e-9;
  if (mean_w <= o_.armed_below_w) {
    armed_ = true;
    calm_since_ = -1;
    // At the floor by the job's own doing (no hold in the window): the ceiling sits just above
    // the power, so that the rise out of it is paced from where it starts; the floor's own noise
    // (a tenth of a window's rise) holds nothing.
    if (last_hold_ns_ < 0 || now_ns - last_hold_ns_ >= o_.window_ns)
      ceiling_w_ = std::min(ceiling_w_, mean_w + kNoise * per_window_w);
  }
  if (!armed_) return false;
  // Held now, the job's power still runs on for the drain: the mean a drain from now, with that
  // much more of the job's power in it, is what must stay under the ceiling then.
  const double ahead = static_cast<double>(drain_ns_) / static_cast<double>(o_.window_ns);
  const double then_w = mean_w + (high_w_ - mean_w) * ahead;
  if (then_w > ceiling_w_ + kLead * o_.ramp_w_per_s * static_cast<double>(drain_ns_) * 1e-9) {
    calm_since_ = -1;
    last_hold_ns_ = now_ns;
    return true;
  }
  if (mean_w > o_.armed_below_w) {
    if (calm_since_ < 0) calm_since_ = now_ns;
    if (now_ns - calm_since_ >= o_.window_ns) armed_ = false;
  }
  return false;
}

}  // namespace powershape::shape
