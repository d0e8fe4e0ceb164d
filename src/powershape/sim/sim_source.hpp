#pragma once
// The telemetry sources a --source names, the simulator's among them: "sim:PROFILE" is a simulated
// GPU running the default LM head (16384x896x151936, in one piece) back to back for 10 minutes,
// simulated up front (about a second) and then played in real time, as a replayed recording is;
// any other spec is trace::open_source's (nvml, fake:TRACE.csv, hwmon[:ROOT]).
#include <memory>
#include <string>
#include <vector>

#include "powershape/telemetry/source.hpp"

namespace powershape::sim {

std::unique_ptr<telemetry::Source> open_source(const std::string& spec,
                                               const std::vector<int>& gpus);

}  // namespace powershape::sim
