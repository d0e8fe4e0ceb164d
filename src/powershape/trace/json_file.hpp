#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "powershape/trace/trace.hpp"

namespace powershape::trace {

// The JSON file of a recording: its metadata (source, devices, regions, events; no samples) and
// a summary object computed by the caller.
struct JsonFile {
  Trace meta;
  nlohmann::json summary;
  nlohmann::json cpu_energy;  // the CPU's RAPL zones over the run (monitor); null: none
  nlohmann::json per_token;   // the energy a token (monitor --tokens-per-step); null: none
  nlohmann::json by_process;  // each GPU's energy by process (monitor, NVML); null: none
  bool operator==(const JsonFile&) const = default;
};

nlohmann::json to_json(const JsonFile& f);
// Throws std::runtime_error naming the file and what is wrong with it.
JsonFile json_file_from(const nlohmann::json& j, const std::string& name);
void write_json(const std::string& path, const JsonFile& f);
JsonFile read_json(const std::string& path);

}  // namespace powershape::trace
