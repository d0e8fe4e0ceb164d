#pragma once
// Blackwell's own power smoothing (GB200, GB300; driver 570 and later): the firmware holds the
// GPU's power above a floor (a share of its power limit) and its ramps under a rate, after a
// hysteresis before ramping down, by the parameters of one of five preset profiles. Read through
// NVML's NVML_FI_PWR_SMOOTHING_* fields; set (root) with nvmlDevicePowerSmoothingSetState,
// ...ActivatePresetProfile and ...UpdatePresetProfileParam. Written to NVML's header and held to
// the fake NVML: no Blackwell GPU was at hand.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "powershape/telemetry/nvml_api.hpp"

namespace powershape::advise {

struct SmoothingProfile {
  double floor_pct = 0;          // of the power limit
  double ramp_up_w_per_s = 0;    // the fastest rise allowed
  double ramp_down_w_per_s = 0;  // the fastest fall allowed
  double hysteresis_ms = 0;      // how long power stays low before it may fall
  bool operator==(const SmoothingProfile&) const = default;
};

struct SmoothingStatus {
  bool enabled = false;
  int active_profile = 0;
  double applied_floor_w = 0, applied_ceiling_w = 0;  // what the firmware holds now
  double min_floor_pct = 0, max_floor_pct = 100;      // the floors a profile may take
  std::optional<double> lifetime_pct;                 // the smoothing circuitry's life left
  std::vector<SmoothingProfile> profiles;             // by id
};

// A change asked of it; what is unset stays as found.
struct SmoothingChange {
  std::optional<int>
      profile{};  // activated, and the one the parameters go to (default: the active)
  std::optional<double> floor_pct{}, ramp_up_w_per_s{}, ramp_down_w_per_s{}, hysteresis_ms{};
  std::optional<bool> enabled{};  // default: enabled
  bool operator==(const SmoothingChange&) const = default;
  // "power smoothing on, profile 1 (floor 60%, up 100 W/s)"
  std::string describe() const;
};

// GPU `what` ("GPU 0") through `api`: throws unsupported naming it where the GPU has none.
SmoothingStatus read_smoothing(const telemetry::nvml::Api& api, telemetry::nvml::Device dev,
                               const std::string& what);
// The state of NVML's GPU `gpu`; throws naming "gpu" where NVML has no such GPU.
SmoothingStatus read_smoothing(int gpu);
nlohmann::json to_json(const SmoothingStatus& s);
// The state, as `power-smoothing` shows it: on or off, what the firmware holds now, the floors
// allowed, and each profile's floor, ramps and hysteresis.
void print_smoothing(std::FILE* out, const SmoothingStatus& s, int gpu);

// Throws invalid_input naming the parameter ("floor", "profile") where `c` asks what the GPU
// (`now`) does not allow.
void check_smoothing(const SmoothingChange& c, const SmoothingStatus& now, const std::string& what);
// Checks `c`, then sets the profile's parameters, activates it and sets the state.
void apply_smoothing(const telemetry::nvml::Api& api, telemetry::nvml::Device dev,
                     const std::string& what, const SmoothingChange& c, const SmoothingStatus& now);
// What restore_smoothing needs to undo `c`: the state, the active profile and the changed
// profile's parameters as they are now.
nlohmann::json smoothing_snapshot(const SmoothingStatus& now, const SmoothingChange& c);
// Throws invalid_input where a record (smoothing_snapshot's) asks what the GPU (`now`) does not
// allow, as check_smoothing would refuse it asked now.
void check_record(const nlohmann::json& snap, const SmoothingStatus& now, const std::string& what);
// Puts back what smoothing_snapshot recorded, the record checked against the GPU first.
void restore_smoothing(const telemetry::nvml::Api& api, telemetry::nvml::Device dev,
                       const std::string& what, const nlohmann::json& snap);

}  // namespace powershape::advise
