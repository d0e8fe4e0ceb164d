#include "powershape/workload/plan_json.hpp"

#include <fstream>
#include <stdexcept>

namespace powershape::workload {
using nlohmann::json;

namespace {

double positive(const json& phase, const std::string& where, const char* key) {
  if (!phase.contains(key)) throw std::runtime_error(where + "." + key + ": missing");
  const json& v = phase.at(key);
  if (!v.is_number() || !(v.get<double>() > 0)) {
    throw std::runtime_error(where + "." + key + ": expected a positive number");
  }
  return v.get<double>();
}

}  // namespace

Plan plan_from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("plan: expected an object");
  Plan p;
  p.name = j.value("name", std::string("plan"));
  if (!j.contains("phases") || !j.at("phases").is_array() || j.at("phases").empty()) {
    throw std::runtime_error("phases: expected a non-empty array");
  }
  for (std::size_t i = 0; i < j.at("phases").size(); ++i) {
    const json& x = j.at("phases")[i];
    const std::string where = "phases[" + std::to_string(i) + "]";
    if (!x.is_object()) throw std::runtime_error(where + ": expected an object");
    Phase ph;
    ph.name = x.value("name", "phase" + std::to_string(i));
    if (!x.contains("kind") || !x.at("kind").is_string()) {
      throw std::runtime_error(where + ".kind: expected compute, memory or idle");
    }
    const std::string kind = x.at("kind").get<std::string>();
    if (kind == "compute") {
      ph.kind = PhaseKind::kCompute;
      ph.flops = positive(x, where, "flops");
      if (x.contains("efficiency")) {
        ph.efficiency = positive(x, where, "efficiency");
        if (ph.efficiency > 1) throw std::runtime_error(where + ".efficiency: expected at most 1");
      }
    } else if (kind == "memory") {
      ph.kind = PhaseKind::kMemory;
      ph.bytes = positive(x, where, "bytes");
    } else if (kind == "idle") {
      ph.kind = PhaseKind::kIdle;
      ph.seconds = positive(x, where, "seconds");
    } else {
      throw std::runtime_error(where + ".kind: expected compute, memory or idle, found '" + kind +
                               "'");
    }
    p.phases.push_back(ph);
  }
  return p;
}

Plan read_plan(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  try {
    return plan_from_json(json::parse(in));
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": not JSON (" + std::string(e.what()) + ")");
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

json to_json(const Plan& p) {
  json j = {{"name", p.name}, {"phases", json::array()}};
  for (const auto& ph : p.phases) {
    json x = {{"name", ph.name}, {"kind", to_string(ph.kind)}};
    if (ph.kind == PhaseKind::kCompute) {
      x["flops"] = ph.flops;
      x["efficiency"] = ph.efficiency;
    }
    if (ph.kind == PhaseKind::kMemory) x["bytes"] = ph.bytes;
    if (ph.kind == PhaseKind::kIdle) x["seconds"] = ph.seconds;
    j["phases"].push_back(x);
  }
  return j;
}

}  // namespace powershape::workload
