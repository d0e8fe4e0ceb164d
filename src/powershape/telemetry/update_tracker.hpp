#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace powershape::telemetry {

// Learns how often a polled signal really changes: the median time between the polls at which
// its value changed.
class UpdateTracker {
 public:
  void feed(int64_t t_ns, int64_t value);
  std::size_t changes() const { return changes_; }
  // Median interval between changes; empty until two changes have been seen.
  std::optional<int64_t> median_period_ns() const;

 private:
  static constexpr std::size_t kKeep = 4096;
  std::optional<int64_t> last_value_;
  std::optional<int64_t> last_change_ns_;
  std::vector<int64_t> intervals_;  // ring of the latest kKeep intervals
  std::size_t changes_ = 0;
};

}  // namespace powershape::telemetry
