#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace powershape::util {

// Writes `j` to `path`, indented; throws std::runtime_error naming the path when it cannot.
void write_json_file(const std::string& path, const nlohmann::json& j);

}  // namespace powershape::util
