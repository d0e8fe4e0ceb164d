#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "powershape/workload/plan.hpp"

namespace powershape::workload {

// A plan as JSON: {"name": "...", "phases": [{"name": "...", "kind": "compute"|"memory"|"idle",
// "flops": F, "bytes": B, "seconds": S, "efficiency": E}, ...]}. Each kind needs its own amount
// (flops, bytes or seconds), positive; efficiency is optional, in (0, 1]. A missing or
// out-of-range field throws std::runtime_error naming it ("phases[2].flops: ...").
Plan plan_from_json(const nlohmann::json& j);
Plan read_plan(const std::string& path);
nlohmann::json to_json(const Plan& p);

}  // namespace powershape::workload
