#pragma once
#include <memory>
#include <string>
#include <vector>

#include "powershape/telemetry/source.hpp"

namespace powershape::trace {

// Opens the telemetry source a --source option names:
//   nvml            NVIDIA GPUs through libnvidia-ml.so.1 (the default)
//   fake:TRACE.csv  replays a recorded trace in real time
//   hwmon[:ROOT]    Jetson INA3221 rails under ROOT (default /sys/class/hwmon)
// `gpus` picks devices by index (nvml only; empty means all). Throws std::runtime_error with a
// one-line reason.
std::unique_ptr<telemetry::Source> open_source(const std::string& spec,
                                               const std::vector<int>& gpus);

}  // namespace powershape::trace
