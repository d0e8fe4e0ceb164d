#include "fake_smoothing.hpp"

#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>

namespace nvml = powershape::telemetry::nvml;

namespace fake_nvml {
namespace {

constexpr double kMinFloorPct = 20, kMaxFloorPct = 90;

struct Profile {
  double floor_pct = 20, up_w_s = 1000, down_w_s = 500, hysteresis_ms = 100;
};
struct Smoothing {
  unsigned enabled = 0, profile = 0;
  std::array<Profile, nvml::kSmoothingMaxProfiles> profiles{};
};

const char* path() { return std::getenv("POWERSHAPE_FAKE_NVML_SMOOTHING"); }

// One line per GPU: "gpu enabled profile" and each profile's floor, up, down, hysteresis.
std::map<int, Smoothing> load() {
  std::map<int, Smoothing> out;
  std::ifstream in(path());
  int gpu = 0;
  Smoothing s;
  while (in >> gpu >> s.enabled >> s.profile) {
    for (auto& p : s.profiles) in >> p.floor_pct >> p.up_w_s >> p.down_w_s >> p.hysteresis_ms;
    if (!in) break;
    if (s.profile >= nvml::kSmoothingMaxProfiles) s.profile = 0;  // a file edited by hand
    out[gpu] = s;
  }
  return out;
}

Smoothing of(int gpu) {
  auto all = load();
  auto it = all.find(gpu);
  return it == all.end() ? Smoothing{} : it->second;
}

void store(int gpu, const Smoothing& s) {
  auto all = load();
  all[gpu] = s;
  std::ofstream out(path(), std::ios::trunc);
  for (const auto& [g, x] : all) {
    out << g << ' ' << x.enabled << ' ' << x.profile;
    for (const auto& p : x.profiles)
      out << ' ' << p.floor_pct << ' ' << p.up_w_s << ' ' << p.down_w_s << ' ' << p.hysteresis_ms;
    out << '\n';
  }
}

void put(nvml::FieldValue& v, double value) {
  v.nvmlReturn = nvml::kSuccess;
  v.valueType = nvml::kDouble;
  v.value.dVal = value;
}
void put_uint(nvml::FieldValue& v, unsigned value) {
  v.nvmlReturn = nvml::kSuccess;
  v.valueType = nvml::kUnsignedInt;
  v.value.uiVal = value;
}

}  // namespace

bool is_smoothing_field(unsigned field) {
  return field >= nvml::kFiSmoothingEnabled && field <= 273;
}

void read_smoothing_field(int gpu, unsigned limit_mw, nvml::FieldValue& v) {
  if (path() == nullptr) {
    // As an H100 with driver 580 answers: the active profile field reads 0, every other is
    // refused.
    if (v.fieldId == nvml::kFiSmoothingActiveProfile) return put_uint(v, 0);
    v.nvmlReturn = nvml::kErrorNotSupported;
    return;
  }
  const Smoothing s = of(gpu);
  const Profile& active = s.profiles[s.profile];
  const bool per_profile = v.fieldId >= nvml::kFiSmoothingProfileFloorPct &&
                           v.fieldId <= nvml::kFiSmoothingProfileHysteresis;
  if (per_profile && v.scopeId >= nvml::kSmoothingMaxProfiles) {
    v.nvmlReturn = nvml::kErrorInvalidArgument;
    return;
  }
  const Profile& p = per_profile ? s.profiles[v.scopeId] : active;
  switch (v.fieldId) {
    case nvml::kFiSmoothingEnabled:
      return put_uint(v, s.enabled);
    case nvml::kFiSmoothingPrivLevel:
      return put_uint(v, 0);
    case nvml::kFiSmoothingAppliedCeiling:
      return put_uint(v, limit_mw / 1000);  // W
    case nvml::kFiSmoothingAppliedFloor:
      return put_uint(v, s.enabled ? static_cast<unsigned>(
                                         std::lround(limit_mw / 1000.0 * active.floor_pct / 100))
                                   : 0);
    case nvml::kFiSmoothingMaxFloorPct:
      return put(v, kMaxFloorPct);
    case nvml::kFiSmoothingMinFloorPct:
      return put(v, kMinFloorPct);
    case nvml::kFiSmoothingLifetimePct:
      return put(v, 97.5);
    case nvml::kFiSmoothingProfiles:
      return put_uint(v, nvml::kSmoothingMaxProfiles);
    case nvml::kFiSmoothingProfileFloorPct:
      return put(v, p.floor_pct);
    case nvml::kFiSmoothingProfileRampUp:
      return put(v, p.up_w_s * 1e3);
    case nvml::kFiSmoothingProfileRampDown:
      return put(v, p.down_w_s * 1e3);
    case nvml::kFiSmoothingProfileHysteresis:
      return put(v, p.hysteresis_ms);
    case nvml::kFiSmoothingActiveProfile:
      return put_uint(v, s.profile);
    default:  // the administrator's overrides: none set
      return put_uint(v, 0xFFFFFFFFu);
  }
}

nvml::Return set_smoothing_state(int gpu, const nvml::PowerSmoothingState* st) {
  if (path() == nullptr) return nvml::kErrorNotSupported;
  if (st == nullptr || st->state > 1) return nvml::kErrorInvalidArgument;
  if (st->version != nvml::kPowerSmoothingStateV1) return nvml::kErrorArgumentVersionMismatch;
  Smoothing s = of(gpu);
  s.enabled = st->state;
  store(gpu, s);
  return nvml::kSuccess;
}

nvml::Return activate_smoothing_profile(int gpu, const nvml::PowerSmoothingProfile* p) {
  if (path() == nullptr) return nvml::kErrorNotSupported;
  if (p == nullptr || p->profileId >= nvml::kSmoothingMaxProfiles)
    return nvml::kErrorInvalidArgument;
  if (p->version != nvml::kPowerSmoothingProfileV1) return nvml::kErrorArgumentVersionMismatch;
  Smoothing s = of(gpu);
  s.profile = p->profileId;
  store(gpu, s);
  return nvml::kSuccess;
}

nvml::Return update_smoothing_param(int gpu, const nvml::PowerSmoothingProfile* p) {
  if (path() == nullptr) return nvml::kErrorNotSupported;
  if (p == nullptr || p->profileId >= nvml::kSmoothingMaxProfiles || !std::isfinite(p->value))
    return nvml::kErrorInvalidArgument;
  if (p->version != nvml::kPowerSmoothingProfileV1) return nvml::kErrorArgumentVersionMismatch;
  Smoothing s = of(gpu);
  Profile& q = s.profiles[p->profileId];
  switch (p->paramId) {
    case nvml::kSmoothingParamFloorPct:
      if (p->value < kMinFloorPct || p->value > kMaxFloorPct) return nvml::kErrorInvalidArgument;
      q.floor_pct = p->value;
      break;
    case nvml::kSmoothingParamRampUp:
    case nvml::kSmoothingParamRampDown:
      if (p->value <= 0) return nvml::kErrorInvalidArgument;
      (p->paramId == nvml::kSmoothingParamRampUp ? q.up_w_s : q.down_w_s) = p->value;
      break;
    case nvml::kSmoothingParamHysteresis:
      if (p->value < 0) return nvml::kErrorInvalidArgument;
      q.hysteresis_ms = p->value;
      break;
    default:
      return nvml::kErrorInvalidArgument;
  }
  store(gpu, s);
  return nvml::kSuccess;
}

}  // namespace fake_nvml
