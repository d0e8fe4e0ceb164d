#include "powershape/advise/power_smoothing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "powershape/util/error.hpp"

namespace powershape::advise {
namespace nvml = telemetry::nvml;
using nlohmann::json;

namespace {

// Each of NVML's profile parameters, in its order: where a profile holds it and a change asks
// it, its name in errors and in records, and the limits a value must keep.
struct Param {
  unsigned id;
  const char* name;  // the subject of an error about it
  double SmoothingProfile::*field;
  std::optional<double> SmoothingChange::*asked;
  const char* json;    // its key in a record
  const char* format;  // in describe()
  double lo, hi;
};
constexpr double kMaxRate = 1e7;           // W/s: far above any GPU's
constexpr double kMaxHysteresis = 600000;  // ms: ten minutes
const std::array<Param, 4> kParams = {{
    {nvml::kSmoothingParamFloorPct, "floor", &SmoothingProfile::floor_pct,
     &SmoothingChange::floor_pct, "floor_pct", "floor %g%%", 0, 100},
    {nvml::kSmoothingParamRampUp, "ramp-up", &SmoothingProfile::ramp_up_w_per_s,
     &SmoothingChange::ramp_up_w_per_s, "ramp_up_w_per_s", "up %g W/s", 0, kMaxRate},
    {nvml::kSmoothingParamRampDown, "ramp-down", &SmoothingProfile::ramp_down_w_per_s,
     &SmoothingChange::ramp_down_w_per_s, "ramp_down_w_per_s", "down %g W/s", 0, kMaxRate},
    {nvml::kSmoothingParamHysteresis, "hysteresis", &SmoothingProfile::hysteresis_ms,
     &SmoothingChange::hysteresis_ms, "hysteresis_ms", "hysteresis %g ms", 0, kMaxHysteresis},
}};

double as_double(const nvml::FieldValue& v) {
  return v.valueType == nvml::kDouble ? v.value.dVal
                                      : static_cast<double>(nvml::to_int64(v.valueType, v.value));
}

[[noreturn]] void none_on(const std::string& what, const nvml::Api& api, nvml::Return r) {
  throw unsupported(
      what + " has no power smoothing (NVML: " + api.error_string(r) +
      "); Blackwell data-centre GPUs (GB200, GB300) with driver 570 or later have it");
}

void check(const nvml::Api& api, nvml::Return r, const std::string& step, const std::string& what) {
  if (r == nvml::kSuccess) return;
  if (r == nvml::kErrorNotSupported || r == nvml::kErrorFunctionNotFound) none_on(what, api, r);
  throw device_error(step + " on " + what +
                     (r == nvml::kErrorNoPermission
                          ? " needs root or CAP_SYS_ADMIN, and power smoothing's privilege level "
                            "(NVML_FI_PWR_SMOOTHING_PRIV_LVL, set out of band) to allow it"
                          : " failed") +
                     " (NVML: " + api.error_string(r) + ")");
}

template <class F, class... A>
nvml::Return call(F fn, A... args) {
  return fn == nullptr ? nvml::kErrorFunctionNotFound : fn(args...);
}

void set_param(const nvml::Api& api, nvml::Device dev, const std::string& what, int profile,
               const Param& p, double value) {
  nvml::PowerSmoothingProfile q{nvml::kPowerSmoothingProfileV1, static_cast<unsigned>(profile),
                                p.id, value};
  check(
      api, call(api.DevicePowerSmoothingUpdatePresetProfileParam, dev, &q),
      std::string("setting power smoothing's ") + p.name + " of profile " + std::to_string(profile),
      what);
}

void set_profile_and_state(const nvml::Api& api, nvml::Device dev, const std::string& what,
                           int profile, bool enabled) {
  nvml::PowerSmoothingProfile q{nvml::kPowerSmoothingProfileV1, static_cast<unsigned>(profile), 0,
                                0};
  check(api, call(api.DevicePowerSmoothingActivatePresetProfile, dev, &q),
        "activating power smoothing profile " + std::to_string(profile), what);
  nvml::PowerSmoothingState st{nvml::kPowerSmoothingStateV1, enabled ? 1u : 0u};
  check(api, call(api.DevicePowerSmoothingSetState, dev, &st),
        std::string(enabled ? "enabling" : "disabling") + " power smoothing", what);
}

}  // namespace

std::string SmoothingChange::describe() const {
  std::string out = enabled.value_or(true) ? "power smoothing on" : "power smoothing off";
  if (profile) out += ", profile " + std::to_string(*profile);
  std::string params;
  char buf[64];
  for (const Param& p : kParams) {
    if (!(this->*p.asked)) continue;
    std::snprintf(buf, sizeof buf, p.format, *(this->*p.asked));
    params += (params.empty() ? "" : ", ") + std::string(buf);
  }
  return params.empty() ? out : out + " (" + params + ")";
}

SmoothingStatus read_smoothing(const nvml::Api& api, nvml::Device dev, const std::string& what) {
  const unsigned head[] = {nvml::kFiSmoothingEnabled,      nvml::kFiSmoothingActiveProfile,
                           nvml::kFiSmoothingAppliedFloor, nvml::kFiSmoothingAppliedCeiling,
                           nvml::kFiSmoothingMinFloorPct,  nvml::kFiSmoothingMaxFloorPct,
                           nvml::kFiSmoothingLifetimePct,  nvml::kFiSmoothingProfiles};
  const unsigned per_profile[] = {
      nvml::kFiSmoothingProfileFloorPct, nvml::kFiSmoothingProfileRampUp,
      nvml::kFiSmoothingProfileRampDown, nvml::kFiSmoothingProfileHysteresis};
  constexpr std::size_t kHead = std::size(head), kPer = std::size(per_profile);
  std::array<nvml::FieldValue, kHead + kPer * nvml::kSmoothingMaxProfiles> v{};
  for (std::size_t i = 0; i < kHead; ++i) v[i].fieldId = head[i];
  for (unsigned p = 0; p < nvml::kSmoothingMaxProfiles; ++p) {
    for (std::size_t k = 0; k < kPer; ++k) {
      v[kHead + p * kPer + k].fieldId = per_profile[k];
      v[kHead + p * kPer + k].scopeId = p;
    }
  }
  const nvml::Return r = call(api.DeviceGetFieldValues, dev, static_cast<int>(v.size()), v.data());
  // Any refusal but a permission or a lost GPU means none: a driver older than the fields
  // refuses their ids as invalid rather than unsupported.
  for (const nvml::Return e : {r, r == nvml::kSuccess ? v[0].nvmlReturn : r}) {
    if (e == nvml::kSuccess) continue;
    if (e == nvml::kErrorNoPermission || e == nvml::kErrorGpuIsLost)
      check(api, e, "reading power smoothing", what);
    none_on(what, api, e);
  }
  const auto value = [&](std::size_t i) {
    if (v[i].nvmlReturn != nvml::kSuccess)
      check(api, v[i].nvmlReturn, "reading power smoothing field " + std::to_string(v[i].fieldId),
            what);
    return as_double(v[i]);
  };
  SmoothingStatus s;
  s.enabled = value(0) != 0;
  const double active = value(1);
  // DCGM's header gives the applied floor and ceiling in W (NVML's does not say).
  s.applied_floor_w = value(2);
  s.applied_ceiling_w = value(3);
  s.min_floor_pct = value(4);
  s.max_floor_pct = value(5);
  if (v[6].nvmlReturn == nvml::kSuccess) s.lifetime_pct = as_double(v[6]);
  const double n = value(7);
  if (!(n >= 1 && n <= nvml::kSmoothingMaxProfiles))
    throw device_error(what + " reports " + std::to_string(n) + " power smoothing profiles");
  for (unsigned p = 0; p < static_cast<unsigned>(n); ++p) {
    SmoothingProfile q;
    q.floor_pct = value(kHead + p * kPer);
    q.ramp_up_w_per_s = value(kHead + p * kPer + 1) / 1e3;  // the fields are in mW/s
    q.ramp_down_w_per_s = value(kHead + p * kPer + 2) / 1e3;
    q.hysteresis_ms = value(kHead + p * kPer + 3);
    s.profiles.push_back(q);
  }
  if (!(active >= 0 && active < static_cast<double>(s.profiles.size())))
    throw device_error(what + " reports power smoothing profile " + std::to_string(active) +
                       " of " + std::to_string(n));
  s.active_profile = static_cast<int>(active);
  return s;
}

json to_json(const SmoothingStatus& s) {
  json profiles = json::array();
  for (const auto& p : s.profiles) {
    json j;
    for (const Param& q : kParams) j[q.json] = p.*q.field;
    profiles.push_back(j);
  }
  json j = {{"enabled", s.enabled},
            {"active_profile", s.active_profile},
            {"applied_floor_w", s.applied_floor_w},
            {"applied_ceiling_w", s.applied_ceiling_w},
            {"floor_range_pct", {s.min_floor_pct, s.max_floor_pct}},
            {"profiles", profiles}};
  j["lifetime_remaining_pct"] = s.lifetime_pct ? json(*s.lifetime_pct) : json();
  return j;
}

void check_smoothing(const SmoothingChange& c, const SmoothingStatus& now,
                     const std::string& what) {
  const int profile = c.profile.value_or(now.active_profile);
  const int n = static_cast<int>(now.profiles.size());
  if (profile < 0 || profile >= n)
    throw invalid_input("profile", std::to_string(profile) + " is not one of " + what +
                                       "'s power smoothing profiles (0-" + std::to_string(n - 1) +
                                       ")");
  for (std::size_t i = 0; i < kParams.size(); ++i) {
    const std::optional<double>& asked = c.*kParams[i].asked;
    if (!asked) continue;
    const double lo = i == 0 ? now.min_floor_pct : kParams[i].lo;
    const double hi = i == 0 ? now.max_floor_pct : kParams[i].hi;
    const double x = *asked;
    const bool positive = i == 1 || i == 2;  // a ramp of 0 W/s would pin the power
    if (!std::isfinite(x) || x < lo || x > hi || (positive && x <= 0)) {
      char buf[160];
      if (i == 0)
        std::snprintf(buf, sizeof buf, "%g%% is outside %s's floors, %g-%g%%", x, what.c_str(), lo,
                      hi);
      else if (positive)
        std::snprintf(buf, sizeof buf, "%g W/s: a ramp is above 0 and at most %g W/s", x, hi);
      else
        std::snprintf(buf, sizeof buf, "%g ms is not 0-%g ms", x, hi);
      throw invalid_input(kParams[i].name, buf);
    }
  }
}

void apply_smoothing(const nvml::Api& api, nvml::Device dev, const std::string& what,
                     const SmoothingChange& c, const SmoothingStatus& now) {
  check_smoothing(c, now, what);
  const int profile = c.profile.value_or(now.active_profile);
  for (const Param& p : kParams)
    if (c.*p.asked) set_param(api, dev, what, profile, p, *(c.*p.asked));
  set_profile_and_state(api, dev, what, profile, c.enabled.value_or(true));
}

json smoothing_snapshot(const SmoothingStatus& now, const SmoothingChange& c) {
  const int profile = c.profile.value_or(now.active_profile);
  json params = {{"profile", profile}};
  if (profile >= 0 && profile < static_cast<int>(now.profiles.size())) {
    for (const Param& p : kParams)
      params[p.json] = now.profiles[static_cast<std::size_t>(profile)].*p.field;
  }
  return {{"enabled", now.enabled}, {"profile", now.active_profile}, {"params", params}};
}

namespace {

// A record's power smoothing: the state, the active profile, and the changed profile's values.
struct Record {
  bool enabled = false;
  int active = 0;
  SmoothingChange values;  // values.profile: the profile they are of
};

Record parse_record(const json& snap) {
  const auto profile_id = [](const json& j) {
    if (!j.is_number_integer() || j.get<int64_t>() < 0 ||
        j.get<int64_t>() >= nvml::kSmoothingMaxProfiles)
      throw invalid_input("power_smoothing: a profile is not 0-4");
    return j.get<int>();
  };
  if (!snap.is_object() || !snap.value("enabled", json()).is_boolean() ||
      !snap.value("params", json()).is_object())
    throw invalid_input("power_smoothing is not a record of power smoothing");
  Record r;
  r.enabled = snap.at("enabled").get<bool>();
  r.active = profile_id(snap.value("profile", json()));
  const json& params = snap.at("params");
  r.values.profile = profile_id(params.value("profile", json()));
  for (const Param& p : kParams) {
    if (!params.contains(p.json)) continue;
    const json& x = params.at(p.json);
    if (!x.is_number())
      throw invalid_input(std::string("power_smoothing: ") + p.json + " is not a number");
    r.values.*p.asked = x.get<double>();
  }
  return r;
}

}  // namespace

namespace {

// The record, parsed and checked against the GPU (`now`) as a change asking it would be.
Record checked(const json& snap, const SmoothingStatus& now, const std::string& what) {
  const Record r = parse_record(snap);
  if (r.active >= static_cast<int>(now.profiles.size()))
    throw invalid_input("power_smoothing: profile " + std::to_string(r.active) + " is not one of " +
                        what + "'s");
  try {
    check_smoothing(r.values, now, what);
  } catch (const Error& e) {
    throw invalid_input(std::string("power_smoothing: ") + e.what());
  }
  return r;
}

}  // namespace

void check_record(const json& snap, const SmoothingStatus& now, const std::string& what) {
  checked(snap, now, what);
}

void restore_smoothing(const nvml::Api& api, nvml::Device dev, const std::string& what,
                       const json& snap) {
  const Record r = checked(snap, read_smoothing(api, dev, what), what);
  for (const Param& p : kParams)
    if (r.values.*p.asked) set_param(api, dev, what, *r.values.profile, p, *(r.values.*p.asked));
  set_profile_and_state(api, dev, what, r.active, r.enabled);
}

SmoothingStatus read_smoothing(int gpu) {
  telemetry::nvml::Library lib;
  const auto& api = lib.api();
  unsigned n = 0;
  telemetry::nvml::Device dev = nullptr;
  if (api.DeviceGetCount(&n) != telemetry::nvml::kSuccess || gpu < 0 ||
      static_cast<unsigned>(gpu) >= n)
    throw invalid_input("gpu",
                        "no GPU " + std::to_string(gpu) + " (NVML sees " + std::to_string(n) + ")");
  if (api.DeviceGetHandleByIndex(static_cast<unsigned>(gpu), &dev) != telemetry::nvml::kSuccess)
    throw device_error("cannot open GPU " + std::to_string(gpu));
  return read_smoothing(api, dev, "GPU " + std::to_string(gpu));
}

void print_smoothing(std::FILE* out, const SmoothingStatus& s, int gpu) {
  std::fprintf(out, "GPU %d power smoothing: %s, profile %d; the firmware holds %.0f-%.0f W now\n",
               gpu, s.enabled ? "on" : "off", s.active_profile, s.applied_floor_w,
               s.applied_ceiling_w);
  std::fprintf(out, "  floors allowed  %g-%g%% of the power limit", s.min_floor_pct,
               s.max_floor_pct);
  if (s.lifetime_pct) std::fprintf(out, "; circuitry life left %.1f%%", *s.lifetime_pct);
  std::fprintf(out, "\n  profile  floor  ramp up    ramp down  hysteresis\n");
  for (std::size_t i = 0; i < s.profiles.size(); ++i) {
    const auto& p = s.profiles[i];
    std::fprintf(out, "  %-7zu  %4.0f%%  %6.0f W/s %6.0f W/s %7.0f ms%s\n", i, p.floor_pct,
                 p.ramp_up_w_per_s, p.ramp_down_w_per_s, p.hysteresis_ms,
                 static_cast<int>(i) == s.active_profile ? "  (active)" : "");
  }
}

}  // namespace powershape::advise
