#include "powershape/workload/plan_json.hpp"

#include <cmath>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <stdexcept>

#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"

namespace powershape::workload {
using nlohmann::json;

namespace {

// A field in (least, most]: each upper bound keeps a phase finite on any device (1e18 FLOP is
// ~20 minutes at a PFLOP/s, 1e16 bytes ~40 minutes at 4 TB/s).
double bounded(const json& phase, const std::string& where, const char* key, double most,
               bool is_count) {
  if (!phase.contains(key)) throw invalid_input(where + "." + key + ": missing");
  const json& v = phase.at(key);
  const double least_ok = is_count ? 1 : 0;
  const bool ok = v.is_number() && (is_count ? v.get<double>() >= least_ok : v.get<double>() > 0) &&
                  v.get<double>() <= most;
  if (!ok) {
    std::ostringstream m;
    m << where << "." << key << ": expected "
      << (is_count ? "a count from 1 to " : "a positive number up to ") << most;
    throw invalid_input(m.str());
  }
  return v.get<double>();
}
double positive(const json& phase, const std::string& where, const char* key, double most) {
  return bounded(phase, where, key, most, false);
}
// Flops, bytes and dimensions are counts: at least one (1e-300 FLOP is no phase).
double count(const json& phase, const std::string& where, const char* key, double most) {
  return bounded(phase, where, key, most, true);
}

// A misspelt field ("efficency") is an error, not a default.
void only(const json& object, const std::string& where, std::initializer_list<const char*> keys) {
  for (const auto& [k, v] : object.items()) {
    bool known = false;
    for (const char* x : keys) known = known || k == x;
    if (!known) throw invalid_input(where + "." + k + ": unknown field");
  }
}

constexpr std::size_t kMaxPhases = 100'000;

// An optional string field, named when it is not one.
std::string text(const json& object, const std::string& where, const char* key,
                 const std::string& otherwise) {
  if (!object.contains(key)) return otherwise;
  if (!object.at(key).is_string()) throw invalid_input(where + "." + key + ": expected a string");
  return object.at(key).get<std::string>();
}

}  // namespace

Plan plan_from_json(const json& j) {
  if (!j.is_object()) throw invalid_input("plan: expected an object");
  only(j, "plan", {"name", "phases"});
  Plan p;
  p.name = text(j, "plan", "name", "plan");
  if (!j.contains("phases") || !j.at("phases").is_array() || j.at("phases").empty()) {
    throw invalid_input("phases: expected a non-empty array");
  }
  if (j.at("phases").size() > kMaxPhases) throw invalid_input("phases: at most 100000");
  for (std::size_t i = 0; i < j.at("phases").size(); ++i) {
    const json& x = j.at("phases")[i];
    const std::string where = "phases[" + std::to_string(i) + "]";
    if (!x.is_object()) throw invalid_input(where + ": expected an object");
    Phase ph;
    ph.name = text(x, where, "name", "phase" + std::to_string(i));
    if (!x.contains("kind") || !x.at("kind").is_string()) {
      throw invalid_input(where + ".kind: expected compute, memory or idle");
    }
    const std::string kind = x.at("kind").get<std::string>();
    if (kind == "compute") {
      only(x, where, {"name", "kind", "flops", "efficiency", "bytes", "m", "n", "k"});
      ph.kind = PhaseKind::kCompute;
      ph.flops = count(x, where, "flops", 1e18);
      if (x.contains("efficiency")) ph.efficiency = positive(x, where, "efficiency", 1);
      // The bytes a product moves (operands, result) and its shape: optional.
      if (x.contains("bytes")) ph.bytes = count(x, where, "bytes", 1e16);
      for (auto [key, dim] :
           {std::pair{"m", &ph.m}, std::pair{"n", &ph.n}, std::pair{"k", &ph.k}}) {
        if (!x.contains(key)) continue;
        const double v = count(x, where, key, 1e9);
        if (v != std::floor(v)) throw invalid_input(where + "." + key + ": expected a whole size");
        *dim = static_cast<int64_t>(v);
      }
    } else if (kind == "memory") {
      only(x, where, {"name", "kind", "bytes"});
      ph.kind = PhaseKind::kMemory;
      ph.bytes = count(x, where, "bytes", 1e16);
    } else if (kind == "idle") {
      only(x, where, {"name", "kind", "seconds"});
      ph.kind = PhaseKind::kIdle;
      ph.seconds = positive(x, where, "seconds", 3600);
    } else {
      throw invalid_input(where + ".kind: expected compute, memory or idle, found '" + kind + "'");
    }
    p.phases.push_back(ph);
  }
  return p;
}

Plan read_plan(const std::string& path) {
  return util::read_as(path, [](const json& j) { return plan_from_json(j); });
}

json to_json(const Plan& p) {
  json j = {{"name", p.name}, {"phases", json::array()}};
  for (const auto& ph : p.phases) {
    json x = {{"name", ph.name}, {"kind", to_string(ph.kind)}};
    if (ph.kind == PhaseKind::kCompute) {
      x["flops"] = ph.flops;
      x["efficiency"] = ph.efficiency;
      if (ph.bytes > 0) x["bytes"] = ph.bytes;
      if (ph.m > 0) x["m"] = ph.m;
      if (ph.n > 0) x["n"] = ph.n;
      if (ph.k > 0) x["k"] = ph.k;
    }
    if (ph.kind == PhaseKind::kMemory) x["bytes"] = ph.bytes;
    if (ph.kind == PhaseKind::kIdle) x["seconds"] = ph.seconds;
    j["phases"].push_back(x);
  }
  return j;
}

}  // namespace powershape::workload
