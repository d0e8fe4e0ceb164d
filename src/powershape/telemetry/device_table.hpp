#pragma once
// What `devices` prints of a GPU: its name, uuid and driver, its power limits, maximum clocks and
// temperature thresholds (a reading's status where it has no value), and the signals it supports.
#include <cstdio>

#include "powershape/telemetry/device_info.hpp"

namespace powershape::telemetry {

void print_device(std::FILE* out, const DeviceInfo& d);

}  // namespace powershape::telemetry
