#include "powershape/sim/profile.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "powershape/util/error.hpp"
#include "powershape/util/input_file.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/share_dir.hpp"
#include "powershape/workload/steps.hpp"

namespace powershape::sim {
using nlohmann::json;

namespace {

const json& section(const json& j, const char* key) {
  if (!j.contains(key) || !j.at(key).is_object()) {
    throw invalid_input(std::string(key) + ": missing section");
  }
  return j.at(key);
}

double num(const json& sec, const char* sec_name, const char* key, double lo, double hi) {
  const std::string where = std::string(sec_name) + "." + key;
  if (!sec.contains(key)) throw invalid_input(where + ": missing");
  if (!sec.at(key).is_number()) throw invalid_input(where + ": expected a number");
  double v = sec.at(key).get<double>();
  if (!(v >= lo && v <= hi)) {
    throw invalid_input(where + ": " + std::to_string(v) + " is out of range [" +
                        std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

// Each field: section, key, member, allowed range.
struct Field {
  const char* section;
  const char* key;
  double Profile::*member;
  double lo, hi;
};
const Field kFields[] = {
    {"clocks", "min_mhz", &Profile::min_mhz, 10, 5000},
    {"clocks", "max_mhz", &Profile::max_mhz, 100, 5000},
    {"compute", "flops_per_cycle", &Profile::flops_per_cycle, 1, 1e8},
    {"compute", "sms", &Profile::sms, 1, 1024},
    {"memory", "bandwidth_gbs", &Profile::mem_bandwidth_gbs, 1, 1e5},
    {"memory", "clock_sensitivity", &Profile::mem_clock_sensitivity, 0, 1},
    {"power", "idle_w", &Profile::idle_w, 0, 5000},
    {"power", "dynamic_w", &Profile::dynamic_w, 1, 10000},
    {"power", "memory_w", &Profile::memory_w, 0, 5000},
    {"power", "leakage_w", &Profile::leakage_w, 0, 5000},
    {"power", "leakage_per_c", &Profile::leakage_per_c, 0, 1},
    {"power", "leakage_ref_c", &Profile::leakage_ref_c, -50, 150},
    {"power", "memory_phase_activity", &Profile::memory_phase_activity, 0, 1},
    {"power", "idle_activity", &Profile::idle_activity, 0, 1},
    {"thermal", "ambient_c", &Profile::ambient_c, -50, 100},
    {"thermal", "r_die_c_per_w", &Profile::r_die_c_per_w, 1e-6, 100},
    {"thermal", "tau_die_s", &Profile::tau_die_s, 1e-3, 1e5},
    {"thermal", "r_sink_c_per_w", &Profile::r_sink_c_per_w, 0, 100},
    {"thermal", "tau_sink_s", &Profile::tau_sink_s, 1e-3, 1e5},
    {"thermal", "max_operating_c", &Profile::max_operating_c, 20, 150},
    {"governor", "power_limit_w", &Profile::power_limit_w, 1, 5000},
    {"governor", "fast_limit_w", &Profile::fast_limit_w, 1, 10000},
    {"governor", "window_ms", &Profile::window_ms, 1, 10000},
    {"governor", "update_ms", &Profile::update_ms, 0.1, 1000},
    {"governor", "gain_mhz_per_w_s", &Profile::gain_mhz_per_w_s, 0, 1e6},
    {"governor", "recovery_mhz_per_s", &Profile::recovery_mhz_per_s, 1, 1e7},
    {"governor", "thermal_gain_mhz_per_c_s", &Profile::thermal_gain_mhz_per_c_s, 0, 1e6},
    {"sensor", "update_ms", &Profile::sensor_update_ms, 0.1, 10000},
    {"sensor", "usage_window_ms", &Profile::usage_window_ms, 0.1, 100000},
    {"sensor", "driver_sample_ms", &Profile::driver_sample_ms, 0.1, 10000},
    {"sensor", "clock_step_mhz", &Profile::clock_step_mhz, 0.001, 1000},
};

// Optional mechanisms, each a group of figures given together or not at all (Profile's comments
// say what each does); the first field says whether the group is on.
const Field kSpikeFields[] = {
    {"governor", "spike_window_ms", &Profile::spike_window_ms, 0.1, 10000},
    {"governor", "spike_limit_w", &Profile::spike_limit_w, 1, 10000},
    {"governor", "spike_gain_mhz_per_w_s", &Profile::spike_gain_mhz_per_w_s, 0, 1e6},
    {"governor", "spike_recovery_mhz_per_s", &Profile::spike_recovery_mhz_per_s, 0.1, 1e7},
};
const Field kSlowdownFields[] = {
    {"thermal", "slowdown_c", &Profile::slowdown_c, 20, 150},
    {"thermal", "slowdown_hysteresis_c", &Profile::slowdown_hysteresis_c, 0, 100},
    {"thermal", "slowdown_step_mhz", &Profile::slowdown_step_mhz, 1, 5000},
    {"thermal", "slowdown_interval_ms", &Profile::slowdown_interval_ms, 0.1, 1e5},
};
const Field kFanFields[] = {
    {"fan", "min_pct", &Profile::fan_min_pct, 0, 99},
    {"fan", "start_c", &Profile::fan_start_c, 0, 150},
    {"fan", "full_c", &Profile::fan_full_c, 0, 150},
    {"fan", "hysteresis_c", &Profile::fan_hysteresis_c, 0, 50},
    {"fan", "tau_s", &Profile::fan_tau_s, 0.01, 1e4},
    {"fan", "r_sink_at_min_c_per_w", &Profile::fan_r_sink_at_min_c_per_w, 1e-6, 100},
};
const Field kSupplyFields[] = {
    {"supply", "limit_w", &Profile::supply_limit_w, 1, 1e5},
    {"supply", "rest_w", &Profile::supply_rest_w, 0, 1e5},
    {"supply", "window_ms", &Profile::supply_window_ms, 0.1, 1e5},
    {"supply", "degraded_mhz", &Profile::supply_degraded_mhz, 10, 5000},
    {"supply", "hold_s", &Profile::supply_hold_s, 0, 1e5},
};

template <std::size_t N>
bool group_present(const json& j, const Field (&g)[N]) {
  if (!j.contains(g[0].section)) return false;
  const json& sec = j.at(g[0].section);
  for (const Field& f : g)
    if (sec.is_object() && sec.contains(f.key)) return true;
  return std::string(g[0].section) == "fan" || std::string(g[0].section) == "supply";
}

// Reads the group where any of it is there: then all of it must be (the missing one named).
template <std::size_t N>
bool read_group(const json& j, const Field (&g)[N], Profile& p) {
  if (!group_present(j, g)) return false;
  for (const Field& f : g) p.*f.member = num(section(j, f.section), f.section, f.key, f.lo, f.hi);
  return true;
}

template <std::size_t N>
void write_group(json& j, const Field (&g)[N], const Profile& p) {
  for (const Field& f : g) j[f.section][f.key] = p.*f.member;
}

// The kernel model's optional figures: absent, each keeps its default (and is not written).
struct OptionalField {
  const char* key;
  double Profile::*member;
  double lo, hi, absent;
};
const OptionalField kOptionalKernelFields[] = {
    {"issue_activity", &Profile::issue_activity, 0, 1, 0},
    {"wave_quantization", &Profile::wave_quantization, 0, 1, 0},
    {"epilogue_efficiency", &Profile::epilogue_efficiency, 0.01, 1, 1},
    {"l2_row_bytes", &Profile::l2_row_bytes, 0, 1e9, 0},
    {"reread_flops", &Profile::reread_flops, 0, 1e16, 0},
    {"reread_span", &Profile::reread_span, 0, 1e9, 0},
};

}  // namespace

double Profile::volts(double mhz) const {
  if (mhz <= vf_table.front().first) return vf_table.front().second;
  for (std::size_t i = 1; i < vf_table.size(); ++i) {
    if (mhz <= vf_table[i].first) {
      auto [f0, v0] = vf_table[i - 1];
      auto [f1, v1] = vf_table[i];
      return v0 + (v1 - v0) * (mhz - f0) / (f1 - f0);
    }
  }
  return vf_table.back().second;
}

Profile profile_from_json(const json& j) {
  if (!j.is_object()) throw invalid_input("profile: expected an object");
  Profile p;
  if (!j.contains("name") || !j.at("name").is_string()) throw invalid_input("name: missing");
  p.name = j.at("name").get<std::string>();
  p.status =
      j.contains("status") && j.at("status").is_string() ? j.at("status").get<std::string>() : "";
  if (p.status != "calibrated" && p.status != "estimated") {
    throw invalid_input("status: expected calibrated or estimated");
  }
  if (!j.contains("sources") || !j.at("sources").is_array() || j.at("sources").empty()) {
    throw invalid_input("sources: expected a non-empty list of where the figures come from");
  }
  for (const auto& s : j.at("sources")) {
    if (!s.is_string())
      throw invalid_input("sources: expected strings naming where the figures come from");
    p.sources.push_back(s.get<std::string>());
  }
  for (const Field& f : kFields)
    p.*f.member = num(section(j, f.section), f.section, f.key, f.lo, f.hi);
  if (p.min_mhz >= p.max_mhz) throw invalid_input("clocks.min_mhz: must be below clocks.max_mhz");
  // GPUs' DVFS ranges span 4-12x (an H200 345-1980 MHz, a Jetson 114-1301): 50x is no GPU.
  if (p.max_mhz > 50 * p.min_mhz)
    throw invalid_input("clocks.max_mhz: more than 50 times clocks.min_mhz is no GPU's range");
  if (p.fast_limit_w < p.power_limit_w) {
    throw invalid_input("governor.fast_limit_w: must be at least governor.power_limit_w");
  }
  const json& clocks = section(j, "clocks");
  if (!clocks.contains("vf_table") || !clocks.at("vf_table").is_array() ||
      clocks.at("vf_table").size() < 2) {
    throw invalid_input("clocks.vf_table: expected at least two [MHz, volts] pairs");
  }
  for (const auto& e : clocks.at("vf_table")) {
    if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number() ||
        !(e[1].get<double>() > 0)) {
      throw invalid_input("clocks.vf_table: expected [MHz, volts] pairs with volts > 0");
    }
    if (!p.vf_table.empty() && e[0].get<double>() <= p.vf_table.back().first) {
      throw invalid_input("clocks.vf_table: MHz must ascend");
    }
    if (!p.vf_table.empty() && e[1].get<double>() < p.vf_table.back().second) {
      throw invalid_input("clocks.vf_table: volts must not fall as the clock rises");
    }
    p.vf_table.emplace_back(e[0].get<double>(), e[1].get<double>());
  }
  // Leakage grows with temperature and temperature with power: past a loop gain of 1 the die
  // heats without bound.
  const double gain = p.leakage_w * p.leakage_per_c * (p.r_die_c_per_w + p.r_sink_c_per_w);
  if (gain >= 0.5) {
    throw invalid_input("power.leakage_per_c: leakage_w x leakage_per_c x (r_die + r_sink) = " +
                        std::to_string(gain) + ": leakage would run away (at most 0.5)");
  }
  if (const json& g = section(j, "governor"); g.contains("medium_window_ms") ||
                                              g.contains("medium_gain_mhz_per_w_s") ||
                                              g.contains("medium_limit_w")) {
    p.medium_window_ms = num(g, "governor", "medium_window_ms", 0.1, 10000);
    p.medium_gain_mhz_per_w_s = num(g, "governor", "medium_gain_mhz_per_w_s", 0, 1e6);
    p.medium_limit_w = num(g, "governor", "medium_limit_w", p.power_limit_w, p.fast_limit_w);
  }
  if (read_group(j, kSpikeFields, p) && p.spike_limit_w < p.power_limit_w)
    throw invalid_input("governor.spike_limit_w: must be at least governor.power_limit_w");
  read_group(j, kSlowdownFields, p);
  if (read_group(j, kFanFields, p)) {
    if (p.fan_full_c <= p.fan_start_c) throw invalid_input("fan.full_c: must be above fan.start_c");
    if (p.fan_r_sink_at_min_c_per_w < p.r_sink_c_per_w)
      throw invalid_input(
          "fan.r_sink_at_min_c_per_w: a slower fan cools less: at least thermal.r_sink_c_per_w");
  }
  if (read_group(j, kSupplyFields, p)) {
    if (p.supply_rest_w >= p.supply_limit_w)
      throw invalid_input("supply.rest_w: must be below supply.limit_w");
    if (p.supply_degraded_mhz < p.min_mhz || p.supply_degraded_mhz > p.max_mhz)
      throw invalid_input("supply.degraded_mhz: must be within clocks.min_mhz..max_mhz");
  }
  if (const json& s = section(j, "sensor"); s.contains("reports_power_cap")) {
    if (!s.at("reports_power_cap").is_boolean())
      throw invalid_input("sensor.reports_power_cap: expected true or false");
    p.reports_power_cap = s.at("reports_power_cap").get<bool>();
  }
  if (j.contains("kernels")) {
    const json& k = section(j, "kernels");
    p.kernel_launch_us = num(k, "kernels", "launch_us", 0, 1000);
    p.epilogue_k = num(k, "kernels", "epilogue_k", 0, 1e6);
    for (const OptionalField& f : kOptionalKernelFields)
      if (k.contains(f.key)) p.*f.member = num(k, "kernels", f.key, f.lo, f.hi);
    if (k.contains("memory_efficiency")) {
      const json& m = k.at("memory_efficiency");
      if (!m.is_object())
        throw invalid_input("kernels.memory_efficiency: expected {\"kernel\": fraction}");
      const auto& known = workload::memory_kernel_names();
      for (auto it = m.begin(); it != m.end(); ++it) {
        if (std::find(known.begin(), known.end(), it.key()) == known.end()) {
          std::string list;
          for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
          throw invalid_input("kernels.memory_efficiency." + it.key() +
                              ": no memory kernel of that name (" + list + ")");
        }
        if (!it.value().is_number() || !(it.value().get<double>() > 0) ||
            it.value().get<double>() > 1)
          throw invalid_input("kernels.memory_efficiency." + it.key() +
                              ": expected a fraction in (0, 1]");
        p.memory_efficiency.emplace_back(it.key(), it.value().get<double>());
      }
    }
  }
  if (j.contains("accuracy"))
    p.chunk_ratio_points = num(section(j, "accuracy"), "accuracy", "chunk_ratio_points", 0, 100);
  if (j.contains("power_modes")) {
    if (!j.at("power_modes").is_array()) throw invalid_input("power_modes: expected a list");
    for (const auto& m : j.at("power_modes")) {
      if (!m.is_object() || !m.contains("name") || !m.at("name").is_string()) {
        throw invalid_input("power_modes: expected objects with a name, power_limit_w and max_mhz");
      }
      Profile::Mode mode{m.value("name", ""), num(m, "power_modes", "power_limit_w", 1, 5000),
                         num(m, "power_modes", "max_mhz", p.min_mhz, p.max_mhz)};
      if (mode.name.empty()) throw invalid_input("power_modes.name: missing");
      p.power_modes.push_back(mode);
    }
  }
  return p;
}

json to_json(const Profile& p) {
  json j = {{"name", p.name}, {"status", p.status}, {"sources", p.sources}};
  for (const Field& f : kFields) j[f.section][f.key] = p.*f.member;
  if (!p.reports_power_cap) j["sensor"]["reports_power_cap"] = false;
  if (p.medium_gain_mhz_per_w_s > 0) {
    j["governor"]["medium_window_ms"] = p.medium_window_ms;
    j["governor"]["medium_gain_mhz_per_w_s"] = p.medium_gain_mhz_per_w_s;
    j["governor"]["medium_limit_w"] = p.medium_limit_w;
  }
  if (p.spike_gain_mhz_per_w_s > 0) write_group(j, kSpikeFields, p);
  if (p.slowdown_c > 0) write_group(j, kSlowdownFields, p);
  if (p.fan_tau_s > 0) write_group(j, kFanFields, p);
  if (p.supply_limit_w > 0) write_group(j, kSupplyFields, p);
  j["clocks"]["vf_table"] = json::array();
  for (auto [f, v] : p.vf_table) j["clocks"]["vf_table"].push_back({f, v});
  if (p.kernel_launch_us > 0 || p.epilogue_k > 0 || !p.memory_efficiency.empty()) {
    j["kernels"] = {{"launch_us", p.kernel_launch_us},
                    {"epilogue_k", p.epilogue_k},
                    {"memory_efficiency", json::object()}};
    for (const auto& [k, v] : p.memory_efficiency) j["kernels"]["memory_efficiency"][k] = v;
    for (const OptionalField& f : kOptionalKernelFields)
      if (p.*f.member != f.absent) j["kernels"][f.key] = p.*f.member;
  }
  if (p.chunk_ratio_points > 0) j["accuracy"]["chunk_ratio_points"] = p.chunk_ratio_points;
  if (!p.power_modes.empty()) {
    j["power_modes"] = json::array();
    for (const auto& m : p.power_modes) {
      j["power_modes"].push_back(
          {{"name", m.name}, {"power_limit_w", m.power_limit_w}, {"max_mhz", m.max_mhz}});
    }
  }
  return j;
}

double Profile::memory_efficiency_of(const std::string& kernel) const {
  for (const auto& [k, v] : memory_efficiency) {
    if (k == kernel) return v;
  }
  return 1;
}

std::string profiles_dir() {
  if (const char* env = std::getenv("POWERSHAPE_PROFILES")) return env;
  return util::share_dir() + "/profiles";
}

std::vector<std::string> profile_names() {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(profiles_dir(), ec)) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Profile load_profile(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  // A shipped profile's name is that profile, whatever the working folder holds (a recordings
  // folder named h200 beside the user must not shadow the h200 profile); anything else is a path.
  const fs::path shipped = fs::path(profiles_dir()) / (name_or_path + ".json");
  std::error_code ec;
  const bool is_name = !name_or_path.empty() && name_or_path.find('/') == std::string::npos &&
                       fs::is_regular_file(shipped, ec);
  fs::path path = is_name ? shipped : fs::path(name_or_path);
  std::ifstream in;
  if (is_name)
    in.open(path);
  else if (fs::exists(path, ec))
    util::open_input(path.string(), in);  // a device or FIFO named is refused, not read
  if (!in.is_open() || !in) {
    std::string names;
    for (const auto& n : profile_names()) names += (names.empty() ? "" : ", ") + n;
    throw invalid_input("no profile '" + name_or_path + "' (profiles in " + profiles_dir() + ": " +
                        names + ")");
  }
  in.close();
  return util::read_as(path.string(), [](const json& j) { return profile_from_json(j); });
}

std::string profile_for_gpu(const std::string& gpu_name) {
  auto squash = [](std::string s) {  // lower case, letters and digits only
    std::string out;
    for (char c : s)
      if (std::isalnum(static_cast<unsigned char>(c)))
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  std::string name = squash(gpu_name);
  // The simulator names its device "simulated NAME (status)".
  for (const char* prefix : {"simulated", "nvidia", "geforce"})
    if (name.rfind(prefix, 0) == 0) name = name.substr(std::string(prefix).size());
  std::error_code ec;
  std::string best;
  for (const auto& e : std::filesystem::directory_iterator(profiles_dir(), ec)) {
    if (e.path().extension() != ".json") continue;
    const std::string stem = e.path().stem().string();
    if (!name.empty() && name.rfind(squash(stem), 0) == 0 && stem.size() > best.size()) best = stem;
  }
  return best;
}

void apply_power_mode(Profile& p, const std::string& mode) {
  std::string names;
  for (const auto& m : p.power_modes) {
    if (m.name == mode) {
      const double ratio = m.power_limit_w / p.power_limit_w;
      p.fast_limit_w = std::max(p.fast_limit_w * ratio, m.power_limit_w);
      p.medium_limit_w = std::max(p.medium_limit_w * ratio, m.power_limit_w);
      p.power_limit_w = m.power_limit_w;
      p.mode_max_mhz = m.max_mhz;
      return;
    }
    names += (names.empty() ? "" : ", ") + m.name;
  }
  throw invalid_input("profile " + p.name + " has no power mode '" + mode + "'" +
                      (names.empty() ? "" : " (modes: " + names + ")"));
}

namespace {

// The profile a replayed recording's path names (fake:h200/..., .../data/h200/...), if any.
std::string profile_in_path(const std::string& s) {
  for (const auto& p : profile_names())
    if (s.find("/" + p + "/") != std::string::npos ||
        s.find("fake:" + p + "/") != std::string::npos)
      return p;
  return "";
}

}  // namespace

std::map<std::string, std::pair<double, std::string>> profile_limits(const trace::Trace& header) {
  std::map<std::string, std::pair<double, std::string>> out;
  for (const auto& d : header.devices) {
    if (d.enforced_power_limit_mw.ok() || d.power_limit_mw.ok() || out.count(d.name) != 0) continue;
    std::string p = profile_for_gpu(d.name);
    if (p.empty()) p = profile_in_path(d.name);
    if (p.empty()) p = profile_in_path(header.source);
    if (!p.empty()) out[d.name] = {load_profile(p).power_limit_w, p};
  }
  return out;
}

std::vector<workload::Plan> workload_plans(workload::WorkloadArgs& a,
                                           const workload::Rates& device) {
  if (!a.recorded_on.empty()) {
    const Profile r = load_profile(a.recorded_on);
    a.recorded_on_rates = {r.peak_flops_per_s(), r.peak_bytes_per_s()};
  }
  return workload::build_plans(a, device);
}

}  // namespace powershape::sim
