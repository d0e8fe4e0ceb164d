#include "powershape/advise/mfu_power.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"

namespace powershape::advise {
using nlohmann::json;

namespace {

double number(const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j.at(key).is_number() || !std::isfinite(j.at(key).get<double>()))
    throw invalid_input(where + ": '" + key + "' is not a number");
  return j.at(key).get<double>();
}

std::vector<MfuPoint> from_conditions(const json& j, const std::string& file, double peak) {
  if (!j.is_object() || !j.contains("conditions") || !j.at("conditions").is_array())
    throw invalid_input(file + ": expected an object with a 'conditions' list");
  std::vector<MfuPoint> out;
  for (const auto& c : j.at("conditions")) {
    if (!c.is_object()) throw invalid_input(file + ": a condition is not an object");
    const std::string kind = c.value("kind", "");
    const std::string name = c.value("name", kind);
    const std::string where = file + ": condition '" + name + "'";
    MfuPoint p;
    p.name = name;
    if (kind == "idle") {
      if (!c.contains("avg_power_w")) continue;  // recordings before it measured no idle power
      p.power_w = number(c, "avg_power_w", where);
    } else if (kind == "sustained" || kind == "square") {
      const double duty = kind == "square" ? number(c, "duty", where) : 1.0;
      p.mfu = number(c, "compute_tflops", where) * 1e12 * duty / peak;
      p.power_w = number(c, "avg_power_w", where);
      p.power_capped = c.contains("power_capped") ? number(c, "power_capped", where) : 0;
      p.memory = c.value("gap", "idle") == "memory";
    } else {
      continue;
    }
    if (!(p.power_w > 0 && p.power_w < 1e5 && p.mfu >= 0 && p.mfu < 10))
      throw invalid_input(where + ": power or throughput out of range");
    out.push_back(p);
  }
  return out;
}

// data/h200's summaries: each wave's median burst throughput, duty 0.5 for the idle-gap waves
// (the bench that recorded them ran 50% duty), energy over seconds.
std::vector<MfuPoint> from_summaries(const std::string& dir, double peak) {
  std::vector<MfuPoint> out;
  for (const char* name : {"square_wave_idle_summary.json", "sustained_60s_summary.json"}) {
    const std::string file = dir + "/" + name;
    if (!std::filesystem::exists(file)) continue;
    const json j = util::read_json_file(file);
    if (!j.is_object()) throw invalid_input(file + ": expected an object");
    for (const auto& [key, c] : j.items()) {
      if (!c.is_object() || !c.contains("burst_tf_med")) continue;
      const std::string where = file + ": '" + key + "'";
      MfuPoint p;
      p.name = key;
      const double duty = c.contains("duty")             ? number(c, "duty", where)
                          : c.value("gap", "") == "none" ? 1.0
                                                         : 0.5;
      p.mfu = number(c, "burst_tf_med", where) * 1e12 * duty / peak;
      p.power_w = number(c, "energy_J", where) / number(c, "secs", where);
      p.power_capped = c.contains("cap_frac") ? number(c, "cap_frac", where) : 0;
      if (!(p.power_w > 0 && p.power_w < 1e5 && p.mfu >= 0 && p.mfu < 10))
        throw invalid_input(where + ": power or throughput out of range");
      out.push_back(p);
    }
  }
  return out;
}

}  // namespace

std::vector<MfuPoint> read_mfu_points(const std::string& dir, double peak_flops_per_s) {
  if (!(peak_flops_per_s > 0)) throw invalid_input("peak FLOP/s must be positive");
  if (!std::filesystem::is_directory(dir))
    throw invalid_input(dir + ": not a folder (expected a folder a probe recorded)");
  const std::string conditions = dir + "/conditions.json";
  std::vector<MfuPoint> out;
  try {
    out = std::filesystem::exists(conditions)
              ? from_conditions(util::read_json_file(conditions), conditions, peak_flops_per_s)
              : from_summaries(dir, peak_flops_per_s);
  } catch (const nlohmann::json::exception& e) {
    throw invalid_input(dir + ": unexpected JSON type: " + util::strip_json_code(e.what()));
  }
  if (out.empty())
    throw invalid_input(dir +
                        ": no conditions with power and throughput (expected "
                        "conditions.json a probe recorded, or data/h200's summaries)");
  return out;
}

MfuModel fit_mfu(const std::vector<MfuPoint>& points, double cap_share) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : points) {
    if (p.memory || p.power_capped >= cap_share) continue;
    n += 1;
    sx += p.mfu;
    sy += p.power_w;
    sxx += p.mfu * p.mfu;
    sxy += p.mfu * p.power_w;
  }
  double lo = 1e300, hi = -1e300;
  for (const auto& p : points) {
    if (p.memory || p.power_capped >= cap_share) continue;
    lo = std::min(lo, p.mfu);
    hi = std::max(hi, p.mfu);
  }
  if (n >= 2 && hi - lo < kMinMfuSpread)
    throw invalid_input("the uncapped compute conditions span MFU " + std::to_string(lo) + " to " +
                        std::to_string(hi) +
                        ": too narrow to fit a slope (a probe's recording runs 25-75% duties)");
  const double det = n * sxx - sx * sx;
  if (n < 2 || det <= 1e-12 * n * sxx)
    throw invalid_input(
        "the MFU power model needs 2 or more uncapped compute conditions "
        "at different MFU; the recording has " +
        std::to_string(static_cast<int>(n)));
  MfuModel m;
  m.w_per_mfu = (n * sxy - sx * sy) / det;
  m.idle_w = (sy - m.w_per_mfu * sx) / n;
  m.fitted_on = static_cast<int>(n);
  double se = 0;
  for (const auto& p : points) {
    if (p.memory || p.power_capped >= cap_share) continue;
    se += std::pow(p.power_w - m.predict_w(p.mfu), 2);
  }
  m.rms_w = std::sqrt(se / n);
  return m;
}

}  // namespace powershape::advise
