#pragma once
// A GPU setting the advisor can recommend (an SM clock cap, a power limit, a Jetson power mode),
// the candidates a device offers, and the choice among predicted outcomes.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "powershape/advise/power_smoothing.hpp"
#include "powershape/experiment/stats.hpp"
#include "powershape/experiment/tune.hpp"
#include "powershape/telemetry/device_info.hpp"

namespace powershape::advise {

struct Setting {
  Setting() = default;
  Setting(double cap_mhz, double limit_w, std::string mode = "")
      : clock_cap_mhz(cap_mhz), power_limit_w(limit_w), power_mode(std::move(mode)) {}
  double clock_cap_mhz = 0;                  // 0: none
  double power_limit_w = 0;                  // 0: the device's default
  std::string power_mode;                    // empty: the device's default
  std::optional<SmoothingChange> smoothing;  // Blackwell's power smoothing; none: as found
  bool is_default() const {
    return clock_cap_mhz == 0 && power_limit_w == 0 && power_mode.empty() && !smoothing;
  }
  // "as found", "clock cap 1410 MHz", "power limit 450 W", "mode 30W", "power smoothing on, ..."
  std::string describe() const;
  bool operator==(const Setting&) const = default;
};

// What a device lets one set.
struct SettingRange {
  double min_mhz = 0, max_mhz = 0, clock_step_mhz = 15;
  double min_limit_w = 0, max_limit_w = 0;  // 0: power limits cannot be set
  double default_limit_w = 0;
  std::vector<std::string> modes;  // power modes, the default one last (Jetson: MAXN)
  // Power limits settable: whole watts from the lowest, every 1% of the range, below the default.
  double limit_step_w() const;
  double snap_limit_w(double w) const;      // the nearest such limit
  double snap_clock_mhz(double mhz) const;  // the nearest multiple of the clock step
  // The clock caps and power limits considered, lowest and highest (candidate_settings' lattice).
  double lowest_cap_mhz() const;
  double highest_cap_mhz() const;
  double lowest_limit_w() const { return snap_limit_w(min_limit_w); }
  double highest_limit_w() const { return snap_limit_w(default_limit_w - limit_step_w()); }
};

// The range with what NVML reported of the GPU where it did: its maximum SM clock, and its power
// limits (lowest, highest, enforced) when all three are known.
SettingRange with_device_limits(SettingRange r, const telemetry::DeviceInfo& d);

enum class Knob { kClock, kPowerLimit, kMode };
// "clock", "power" or "mode" lists -> knobs; throws naming --knobs.
std::vector<Knob> parse_knobs(const std::string& s);

// The lowest clock cap considered, a share of the maximum: energy optima of the workloads and
// devices simulated lie at 0.5-0.65 of it.
inline constexpr double kLowestCapShare = 0.3;

// The baseline (as found) first, then `points` evenly spaced clock caps from kLowestCapShare of the
// maximum clock up to one step below it, and power limits from the lowest settable up to one step
// below the default, each snapped to what can be set, and every mode but the default.
std::vector<Setting> candidate_settings(const SettingRange& r, const std::vector<Knob>& knobs,
                                        int points);
// Every settable value: each clock step from kLowestCapShare of the maximum, each power limit step.
std::vector<Setting> exhaustive_settings(const SettingRange& r, const std::vector<Knob>& knobs);

// A setting's predicted outcome, per unit of work (an iteration, or the trace's work), and its
// ratios to the baseline's with 95% intervals.
struct Outcome {
  Setting setting;
  double ms = 0, joules = 0;
  experiment::Interval time_ratio, energy_ratio;
  double mean_clock_mhz = 0, mean_power_w = 0;
};

// Less than this (a share of the baseline's objective) is not worth changing a setting for.
inline constexpr double kMinGain = 0.002;

// The outcome with the lowest objective score, at least kMinGain under the baseline's, whose
// predicted slowdown (time ratio - 1, at its
// interval's upper end when `cautious`) is at most max_slowdown (< 0: no bound); the baseline
// (index 0) when none beats it.
std::size_t choose(const std::vector<Outcome>& o, const experiment::Objective& objective,
                   double max_slowdown, bool cautious);

}  // namespace powershape::advise
