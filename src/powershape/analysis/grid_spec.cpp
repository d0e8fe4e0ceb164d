#include "powershape/analysis/grid_spec.hpp"

#include <cmath>
#include <filesystem>
#include <initializer_list>

#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/util/share_dir.hpp"

namespace powershape::analysis {
namespace {

using nlohmann::json;

void only_keys(const json& j, const std::string& where, std::initializer_list<const char*> keys) {
  if (!j.is_object()) throw invalid_input(where + ": expected an object");
  for (const auto& [k, v] : j.items()) {
    bool known = false;
    for (const char* key : keys) known = known || k == key;
    if (!known) throw invalid_input(where + ": unknown field '" + k + "'");
  }
}

double positive(const json& j, const std::string& where, const char* key, double hi) {
  if (!j.contains(key)) throw invalid_input(where + "." + key + ": missing");
  const json& v = j.at(key);
  if (!v.is_number()) throw invalid_input(where + "." + key + ": expected a number");
  const double x = v.get<double>();
  if (!(x > 0) || !(x <= hi))
    throw invalid_input(where + "." + key + ": " + v.dump() + " is outside (0, " + json(hi).dump() +
                        "]");
  return x;
}

// Names and sources are printed with each verdict: a line, not a file.
constexpr std::size_t kMaxText = 1000;

std::string text(const json& j, const char* key) {
  if (!j.contains(key)) return "";
  if (!j.at(key).is_string()) throw invalid_input(std::string(key) + ": expected a string");
  if (j.at(key).get_ref<const std::string&>().size() > kMaxText)
    throw invalid_input(std::string(key) + ": longer than " + std::to_string(kMaxText) +
                        " characters");
  return j.at(key).get<std::string>();
}

// A limit given as `abs_key` (absolute) or `share_key` (of rated power), not both.
std::optional<GridLimit> limit(const json& j, const std::string& where, const char* abs_key,
                               const char* share_key, double share_hi) {
  const bool a = j.contains(abs_key), s = j.contains(share_key);
  if (a && s)
    throw invalid_input(where + ": " + abs_key + " and " + share_key + " both given; one of them");
  if (!a && !s) return std::nullopt;
  GridLimit l;
  l.of_rated = s;
  l.value = s ? positive(j, where, share_key, share_hi) : positive(j, where, abs_key, 1e15);
  l.source = text(j, "source");
  return l;
}

}  // namespace

GridSpec grid_spec_from_json(const json& j) {
  only_keys(j, "spec", {"name", "source", "ramp", "range", "bands"});
  GridSpec g;
  g.name = text(j, "name");
  g.source = text(j, "source");
  if (j.contains("ramp")) {
    const json& r = j.at("ramp");
    only_keys(r, "ramp",
              {"window_s", "up_max_w_per_s", "up_max_share_per_s", "down_max_w_per_s",
               "down_max_share_per_s", "source"});
    g.ramp_window_s = positive(r, "ramp", "window_s", 3600);
    g.ramp_up = limit(r, "ramp", "up_max_w_per_s", "up_max_share_per_s", 1e3);
    g.ramp_down = limit(r, "ramp", "down_max_w_per_s", "down_max_share_per_s", 1e3);
    if (!g.ramp_up && !g.ramp_down) throw invalid_input("ramp: neither an up nor a down limit");
  }
  if (j.contains("range")) {
    const json& r = j.at("range");
    only_keys(r, "range", {"window_s", "max_w", "max_share", "source"});
    g.range_window_s = positive(r, "range", "window_s", 86400);
    g.range = limit(r, "range", "max_w", "max_share", 1);
    if (!g.range) throw invalid_input("range: no max_w or max_share");
  }
  if (j.contains("bands")) {
    if (!j.at("bands").is_array()) throw invalid_input("bands: expected a list");
    if (j.at("bands").size() > kMaxBands)
      throw invalid_input("bands: at most " + std::to_string(kMaxBands) + ", found " +
                          std::to_string(j.at("bands").size()));
    for (std::size_t i = 0; i < j.at("bands").size(); ++i) {
      const json& b = j.at("bands")[i];
      const std::string where = "bands[" + std::to_string(i) + "]";
      only_keys(b, where, {"lo_hz", "hi_hz", "max_share", "max_rms_w", "max_rms_share", "source"});
      GridBand band;
      band.lo_hz = positive(b, where, "lo_hz", 1e6);
      band.hi_hz = positive(b, where, "hi_hz", 1e6);
      if (!(band.hi_hz > band.lo_hz)) throw invalid_input(where + ": hi_hz must be above lo_hz");
      if (b.contains("max_share")) band.max_share = positive(b, where, "max_share", 1);
      band.max_rms = limit(b, where, "max_rms_w", "max_rms_share", 1);
      if (!band.max_share && !band.max_rms)
        throw invalid_input(where + ": no max_share, max_rms_w or max_rms_share");
      band.source = text(b, "source");
      g.bands.push_back(band);
    }
  }
  if (!g.ramp_up && !g.ramp_down && !g.range && g.bands.empty())
    throw invalid_input("spec: no limits (ramp, range or bands)");
  return g;
}

GridSpec load_grid_spec(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string path = name_or_path;
  if (!fs::exists(path, ec)) {
    const fs::path dir = fs::path(util::share_dir()) / "specs";
    path = (dir / (name_or_path + ".json")).string();
    if (!fs::exists(path, ec)) {
      std::string names;
      for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".json")
          names += (names.empty() ? "" : ", ") + e.path().stem().string();
      throw invalid_input("no grid spec '" + name_or_path + "' (a file, or one of " +
                          (names.empty() ? std::string("none in ") + dir.string() : names) + ")");
    }
  }
  // A spec is a few limits: one far larger is not one (and would be parsed whole into memory).
  if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) > kMaxSpecBytes)
    throw invalid_input(path + ": over " + std::to_string(kMaxSpecBytes >> 10) +
                        " KiB, more than a grid spec holds");
  return util::read_as(path, [](const json& j) { return grid_spec_from_json(j); });
}

}  // namespace powershape::analysis
