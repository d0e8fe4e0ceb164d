#pragma once
// The fake NVML's Blackwell power smoothing, kept in the file POWERSHAPE_FAKE_NVML_SMOOTHING so
// that a test sees what one process left for the next. Without that variable the GPUs have none
// (every smoothing field and setter answers NOT_SUPPORTED, as on an H100). Each GPU starts
// disabled on profile 0, its five profiles at a 20% floor, 1000 W/s up, 500 W/s down, 100 ms of
// hysteresis; floors may be set between 20% and 90% of the limit (GB200's range).
#include "powershape/telemetry/nvml_api.hpp"

namespace fake_nvml {

// Whether the smoothing fields are this module's.
bool is_smoothing_field(unsigned field);
// Fills one smoothing field of GPU `gpu` whose power limit is `limit_mw`.
void read_smoothing_field(int gpu, unsigned limit_mw, powershape::telemetry::nvml::FieldValue& v);

powershape::telemetry::nvml::Return set_smoothing_state(
    int gpu, const powershape::telemetry::nvml::PowerSmoothingState* s);
powershape::telemetry::nvml::Return activate_smoothing_profile(
    int gpu, const powershape::telemetry::nvml::PowerSmoothingProfile* p);
powershape::telemetry::nvml::Return update_smoothing_param(
    int gpu, const powershape::telemetry::nvml::PowerSmoothingProfile* p);

}  // namespace fake_nvml
