#include "powershape/telemetry/update_tracker.hpp"

#include <algorithm>

namespace powershape::telemetry {

void UpdateTracker::feed(int64_t t_ns, int64_t value) {
  if (last_value_ && *last_value_ == value) return;
  if (last_value_) {
    ++changes_;
    if (last_change_ns_) {
      int64_t dt = t_ns - *last_change_ns_;
      if (intervals_.size() < kKeep) {
        intervals_.push_back(dt);
      } else {
        intervals_[changes_ % kKeep] = dt;
      }
    }
    last_change_ns_ = t_ns;
  }
  last_value_ = value;
}

std::optional<int64_t> UpdateTracker::median_period_ns() const {
  if (intervals_.empty()) return std::nullopt;
  std::vector<int64_t> v = intervals_;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace powershape::telemetry
