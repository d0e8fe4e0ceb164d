#include "powershape/trace/json_codec.hpp"

#include <limits>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "powershape/util/error.hpp"

namespace powershape::trace {
namespace {
using nlohmann::json;
using telemetry::Reading;
using telemetry::Status;

// A device figure is a number, or null with its reason under "unavailable" (a JSON reader
// expects numbers in a numeric field).
void put_reading(json& j, const char* key, const Reading& r) {
  if (r.ok()) {
    j[key] = r.value;
    return;
  }
  j[key] = nullptr;
  if (r.status != Status::kNotRead)
    j["unavailable"][key] = std::string(telemetry::status_token(r.status));
}

Reading reading_from(const json& j, const char* key) {
  if (!j.contains(key)) throw invalid_input(std::string("missing key '") + key + "'");
  const json& v = j.at(key);
  if (v.is_number_integer()) return Reading::of(v.get<int64_t>());
  std::optional<std::string> token;  // null, with its reason beside it, or a v1 file's token
  if (v.is_string()) token = v.get<std::string>();
  if (v.is_null()) {
    const json* why = j.contains("unavailable") ? &j.at("unavailable") : nullptr;
    token = why != nullptr && why->is_object() && why->contains(key) && why->at(key).is_string()
                ? why->at(key).get<std::string>()
                : "";
  }
  if (token) {
    if (auto s = telemetry::status_from_token(*token)) return Reading::failed(*s);
  }
  throw invalid_input(std::string("key '") + key + "': expected an integer or null");
}

template <class T>
T get(const json& j, const char* key) {
  if (!j.contains(key)) throw invalid_input(std::string("missing key '") + key + "'");
  if constexpr (std::is_integral_v<T>) {
    // nlohmann converts 1e73 to an int by a cast with no range check (undefined behaviour): an
    // integer field takes an integer in the type's range, nothing else.
    const json& v = j.at(key);
    const bool fits =
        v.is_number_unsigned()
            ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
            : v.is_number_integer() && v.get<int64_t>() >= std::numeric_limits<T>::min() &&
                  v.get<int64_t>() <= std::numeric_limits<T>::max();
    if (!fits) throw invalid_input(std::string("key '") + key + "': expected an integer");
  }
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw invalid_input(std::string("key '") + key + "' has the wrong type");
  }
}

// clang-format does not settle on one layout for this list.
// clang-format off
#define PS_READINGS(X)                                                     \
  X(power_limit_mw) X(enforced_power_limit_mw) X(min_power_limit_mw)       \
  X(max_power_limit_mw) X(max_sm_clock_mhz) X(max_mem_clock_mhz)           \
  X(temp_slowdown_c) X(temp_shutdown_c) X(temp_gpu_max_c) X(temp_mem_max_c)
// clang-format on

}  // namespace

json to_json(const DeviceInfo& d) {
  json j = {{"index", d.index}, {"name", d.name}, {"uuid", d.uuid}, {"driver", d.driver}};
#define PS_OUT(f) put_reading(j, #f, d.f);
  PS_READINGS(PS_OUT)
#undef PS_OUT
  json support = json::object();
  for (const auto& s : telemetry::signal_specs()) {
    auto st = d.support[static_cast<std::size_t>(s.signal)];
    support[std::string(s.name)] =
        st == Status::kOk ? "ok" : std::string(telemetry::status_token(st));
  }
  j["support"] = support;
  return j;
}

DeviceInfo device_from_json(const json& j) {
  DeviceInfo d;
  d.index = get<int>(j, "index");
  d.name = get<std::string>(j, "name");
  d.uuid = get<std::string>(j, "uuid");
  d.driver = get<std::string>(j, "driver");
#define PS_IN(f) d.f = reading_from(j, #f);
  PS_READINGS(PS_IN)
#undef PS_IN
  const json& support = j.contains("support") ? j.at("support") : json::object();
  for (const auto& s : telemetry::signal_specs()) {
    std::string key(s.name);
    // A trace written before the signal existed (power smoothing's came later) did not read it.
    if (!support.contains(key)) {
      d.support[static_cast<std::size_t>(s.signal)] = Status::kNotSupported;
      continue;
    }
    auto v = support.at(key).get<std::string>();
    auto st = v == "ok" ? std::optional<Status>(Status::kOk) : telemetry::status_from_token(v);
    if (!st) throw invalid_input("support." + key + ": unknown status '" + v + "'");
    d.support[static_cast<std::size_t>(s.signal)] = *st;
  }
  return d;
}

json to_json(const Region& r) {
  return {{"name", r.name}, {"gpu", r.gpu}, {"begin_ns", r.begin_ns}, {"end_ns", r.end_ns}};
}

Region region_from_json(const json& j) {
  Region r{get<std::string>(j, "name"), get<int>(j, "gpu"), get<int64_t>(j, "begin_ns"),
           get<int64_t>(j, "end_ns")};
  if (r.end_ns < r.begin_ns) throw invalid_input("region '" + r.name + "' ends before it begins");
  // Steady-clock times within ~146 years either side of the clock's origin: a region's length,
  // and its distance from any reading, then fit int64 ns.
  constexpr int64_t kMaxAbsNs = int64_t{1} << 62;
  if (r.begin_ns < -kMaxAbsNs || r.end_ns > kMaxAbsNs)
    throw invalid_input("region '" + r.name + "': a time beyond 2^62 ns (146 years)");
  return r;
}

json to_json(const Event& e) { return {{"t_ns", e.t_ns}, {"gpu", e.gpu}, {"what", e.what}}; }

Event event_from_json(const json& j) {
  return {get<int64_t>(j, "t_ns"), get<int>(j, "gpu"), get<std::string>(j, "what")};
}

json to_json(const ProcessSample& p) {
  return {{"t_ns", p.t_ns}, {"gpu", p.gpu},     {"pid", p.pid},
          {"sm", p.sm_pct}, {"mem", p.mem_pct}, {"name", p.name}};
}

ProcessSample process_from_json(const json& j) {
  ProcessSample p{get<int64_t>(j, "t_ns"), get<int>(j, "gpu"), get<int64_t>(j, "pid"),
                  get<int>(j, "sm"),       get<int>(j, "mem"), get<std::string>(j, "name")};
  if (p.gpu < 0 || p.gpu > 1023) throw invalid_input("gpu: expected 0-1023");
  if (p.pid < 0) throw invalid_input("pid: expected a process id, 0 or more");
  if (p.sm_pct < 0 || p.sm_pct > 100 || p.mem_pct < 0 || p.mem_pct > 100)
    throw invalid_input("sm, mem: expected percentages, 0-100");
  return p;
}

}  // namespace powershape::trace
