#pragma once
// JSON forms of the trace's metadata (devices, regions, events, process samples), shared by the CSV
// comment lines and the JSON summary file.
#include <nlohmann/json.hpp>

#include "powershape/trace/trace.hpp"

namespace powershape::trace {

nlohmann::json to_json(const DeviceInfo& d);
nlohmann::json to_json(const Region& r);
nlohmann::json to_json(const Event& e);
nlohmann::json to_json(const ProcessSample& p);
// Each throws std::runtime_error naming the missing or mistyped key.
DeviceInfo device_from_json(const nlohmann::json& j);
Region region_from_json(const nlohmann::json& j);
Event event_from_json(const nlohmann::json& j);
// Percentages outside 0-100 and a negative pid or GPU are refused.
ProcessSample process_from_json(const nlohmann::json& j);

}  // namespace powershape::trace
