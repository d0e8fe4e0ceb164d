#include "powershape/trace/json_file.hpp"

#include <fstream>
#include <stdexcept>

#include "powershape/trace/json_codec.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/input_file.hpp"
#include "powershape/util/json_io.hpp"

namespace powershape::trace {
using nlohmann::json;

json to_json(const JsonFile& f) {
  json j = {{"format", "powershape summary v1"}, {"source", f.meta.source}};
  j["devices"] = json::array();
  for (const auto& d : f.meta.devices) j["devices"].push_back(to_json(d));
  j["regions"] = json::array();
  for (const auto& r : f.meta.regions) j["regions"].push_back(to_json(r));
  j["events"] = json::array();
  for (const auto& e : f.meta.events) j["events"].push_back(to_json(e));
  j["summary"] = f.summary;
  if (!f.cpu_energy.is_null()) j["cpu_energy"] = f.cpu_energy;
  if (!f.per_token.is_null()) j["energy_per_token"] = f.per_token;
  if (!f.by_process.is_null()) j["gpu_energy_by_process"] = f.by_process;
  return j;
}

JsonFile json_file_from(const json& j, const std::string& name) {
  try {
    if (!j.is_object() || j.value("format", "") != "powershape summary v1") {
      throw invalid_input("not a powershape summary (format must be 'powershape summary v1')");
    }
    JsonFile f;
    f.meta.source = j.at("source").get<std::string>();
    for (const auto& d : j.at("devices")) f.meta.devices.push_back(device_from_json(d));
    for (const auto& r : j.at("regions")) f.meta.regions.push_back(region_from_json(r));
    for (const auto& e : j.at("events")) f.meta.events.push_back(event_from_json(e));
    f.summary = j.at("summary");
    if (j.contains("cpu_energy")) f.cpu_energy = j.at("cpu_energy");
    if (j.contains("energy_per_token")) f.per_token = j.at("energy_per_token");
    if (j.contains("gpu_energy_by_process")) f.by_process = j.at("gpu_energy_by_process");
    return f;
  } catch (const std::exception& e) {
    throw invalid_input(name + ": " + e.what());
  }
}

void write_json(const std::string& path, const JsonFile& f) {
  util::write_json_file(path, to_json(f));
}

JsonFile read_json(const std::string& path) {
  std::ifstream in;
  util::open_input(path, in);
  json j;
  try {
    in >> j;
  } catch (const json::parse_error& e) {
    std::string what =
        e.what();  // "[json.exception.parse_error.101] parse error at line L, column C: ..."
    auto at = what.find("at line");
    throw invalid_input(path + ": not JSON, " + (at == std::string::npos ? what : what.substr(at)));
  }
  return json_file_from(j, path);
}

}  // namespace powershape::trace
