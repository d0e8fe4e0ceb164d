#include "powershape/advise/outcome_table.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>

namespace powershape::advise {

std::vector<std::size_t> table_order(const std::vector<advise::Outcome>& o, std::size_t chosen) {
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < o.size(); ++i)
    if (i != chosen && i != 0) rest.push_back(i);
  // Modes, then power limits, then clock caps, each from the highest setting down.
  const auto key = [&](std::size_t i) {
    const auto& s = o[i].setting;
    const int kind = !s.power_mode.empty() ? 0 : s.power_limit_w > 0 ? 1 : 2;
    return std::make_tuple(kind, -s.power_limit_w - s.clock_cap_mhz, s.power_mode);
  };
  std::stable_sort(rest.begin(), rest.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<std::size_t> out{chosen};
  if (chosen != 0 && !o.empty()) out.push_back(0);
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

namespace {

// A setting that changed nothing the model or the GPU saw: a power limit above what the GPU drew,
// a clock cap above the clocks it ran.
bool as_found(const advise::Outcome& x, const advise::Outcome& found) {
  return x.ms == found.ms && x.joules == found.joules;
}

bool same_kind(const advise::Setting& a, const advise::Setting& b) {
  return (a.power_limit_w > 0) == (b.power_limit_w > 0) &&
         (a.clock_cap_mhz > 0) == (b.clock_cap_mhz > 0) && a.power_mode.empty() &&
         b.power_mode.empty() && !a.smoothing && !b.smoothing;
}

void row(std::FILE* out, const advise::Outcome& x, const std::string& name, double ms_scale,
         const char* mark) {
  char t[64], e[64];
  std::snprintf(t, sizeof t, "%.4f [%.4f, %.4f]", x.time_ratio.mid, x.time_ratio.lo,
                x.time_ratio.hi);
  std::snprintf(e, sizeof e, "%.4f [%.4f, %.4f]", x.energy_ratio.mid, x.energy_ratio.lo,
                x.energy_ratio.hi);
  std::fprintf(out, "%-32s %11.3f %11.3f %26s %26s %8.1f%s\n", name.c_str(), x.ms * ms_scale,
               x.joules, t, e, x.mean_power_w, mark);
}

}  // namespace

std::size_t print_outcomes(std::FILE* out, const std::vector<advise::Outcome>& o,
                           std::size_t chosen, const char* unit, double ms_scale, bool every) {
  if (o.empty()) return 0;
  std::fprintf(out, "%-32s %11s %11s %26s %26s %8s\n", "setting", unit, "J", "time ratio [95%]",
               "energy ratio [95%]", "power W");
  const auto order = table_order(o, chosen);
  std::size_t hidden = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::size_t i = order[k];
    if (i == chosen || i == 0) {
      row(out, o[i], o[i].setting.describe(), ms_scale, i == chosen ? "  <- recommended" : "");
      continue;
    }
    if (!every) {
      ++hidden;
      continue;
    }
    // A run of settings that each leave the job as found: one line.
    std::size_t end = k;
    while (as_found(o[i], o[0]) && end + 1 < order.size() && order[end + 1] != 0 &&
           order[end + 1] != chosen && as_found(o[order[end + 1]], o[0]) &&
           same_kind(o[order[end + 1]].setting, o[i].setting))
      ++end;
    if (end == k) {
      row(out, o[i], o[i].setting.describe(), ms_scale, "");
      continue;
    }
    const auto& last = o[order[end]].setting;
    const std::string to = last.power_limit_w > 0
                               ? std::to_string(static_cast<int>(last.power_limit_w)) + " W"
                               : std::to_string(static_cast<int>(last.clock_cap_mhz)) + " MHz";
    row(out, o[i], o[i].setting.describe() + " to " + to, ms_scale,
        ("  (" + std::to_string(end - k + 1) + " settings, each as found: never reached)").c_str());
    k = end;
  }
  return hidden;
}

nlohmann::json to_json(const advise::Outcome& x) {
  auto iv = [](const experiment::Interval& i) { return nlohmann::json{i.lo, i.mid, i.hi}; };
  return {{"setting", x.setting.describe()},
          {"clock_cap_mhz", x.setting.clock_cap_mhz},
          {"power_limit_w", x.setting.power_limit_w},
          {"power_mode", x.setting.power_mode},
          {"ms", x.ms},
          {"joules", x.joules},
          {"time_ratio", iv(x.time_ratio)},
          {"energy_ratio", iv(x.energy_ratio)},
          {"mean_power_w", x.mean_power_w}};
}

}  // namespace powershape::advise
