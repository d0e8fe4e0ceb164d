#include "advise_table.hpp"

#include <cstdio>

namespace powershape::cli {

void print_outcomes(const std::vector<advise::Outcome>& o, std::size_t chosen, const char* unit,
                    double ms_scale) {
  std::printf("%-32s %11s %11s %26s %26s %8s\n", "setting", unit, "J", "time ratio [95%]",
              "energy ratio [95%]", "power W");
  for (std::size_t i = 0; i < o.size(); ++i) {
    const auto& x = o[i];
    char t[64], e[64];
    std::snprintf(t, sizeof t, "%.4f [%.4f, %.4f]", x.time_ratio.mid, x.time_ratio.lo,
                  x.time_ratio.hi);
    std::snprintf(e, sizeof e, "%.4f [%.4f, %.4f]", x.energy_ratio.mid, x.energy_ratio.lo,
                  x.energy_ratio.hi);
    std::printf("%-32s %11.3f %11.3f %26s %26s %8.1f%s\n", x.setting.describe().c_str(),
                x.ms * ms_scale, x.joules, t, e, x.mean_power_w,
                i == chosen ? "  <- recommended" : "");
  }
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

}  // namespace powershape::cli
