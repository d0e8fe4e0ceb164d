#include "powershape/experiment/tune_cache.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"

namespace powershape::experiment {

std::string tune_workload_name(const workload::Workload& w) {
  if (!std::holds_alternative<workload::LmHead>(w.kind) &&
      !std::holds_alternative<workload::Msm>(w.kind))
    throw invalid_input("workload", "only the LM head and msm are tuned");
  return workload::kind_name_of(w);
}

std::string tune_cache_path() {
  if (const char* p = std::getenv("POWERSHAPE_CACHE"); p != nullptr && *p != '\0') return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0')
    return std::string(x) + "/powershape/tune.json";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "/tmp") + "/.cache/powershape/tune.json";
}

double device_power_limit_w(const nlohmann::json& device_json) {
  if (device_json.contains("profile"))
    return device_json.at("profile").at("governor").value("power_limit_w", 0.0);
  if (!device_json.contains("device")) return 0;
  const auto& l = device_json.at("device").value("enforced_power_limit_mw", nlohmann::json());
  return l.is_number() ? l.get<double>() / 1000 : 0;
}

std::string tune_key(const nlohmann::json& device_json, const std::string& workload,
                     const std::string& objective) {
  std::string device, driver;
  if (device_json.contains("device")) {
    device = device_json.at("device").value("name", "");
    driver = device_json.at("device").value("driver", "");
  } else if (device_json.contains("profile")) {
    device = "sim:" + device_json.at("profile").value("name", "");
    driver = "simulator";
  } else {
    throw invalid_input("tune_key: no device or profile in the device description");
  }
  const double w = device_power_limit_w(device_json);
  const std::string limit = w > 0 ? std::to_string(std::llround(w)) + " W" : "?";
  return device + " | " + driver + " | " + limit + " | " + workload + " | " + objective;
}

std::optional<int> cached_chunks(const std::string& key) {
  try {
    const auto j = util::read_json_file(tune_cache_path());
    if (!j.contains(key) || !j.at(key).contains("chunks")) return std::nullopt;
    const auto& c = j.at(key).at("chunks");
    if (!c.is_number_integer() || c.get<int64_t>() < 1 || c.get<int64_t>() > 1'000'000)
      return std::nullopt;
    return static_cast<int>(c.get<int64_t>());
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void store_chunks(const std::string& key, int chunks, const nlohmann::json& detail) {
  const std::string path = tune_cache_path();
  nlohmann::json all = nlohmann::json::object();
  try {
    all = util::read_json_file(path);
    if (!all.is_object()) all = nlohmann::json::object();
  } catch (const std::exception&) {
  }
  all[key] = {{"chunks", chunks}, {"detail", detail}};
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  util::write_json_file(tmp, all);
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw device_error("cannot write " + path + ": " + ec.message());
}

}  // namespace powershape::experiment
