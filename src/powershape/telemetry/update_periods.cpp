#include "powershape/telemetry/update_periods.hpp"

#include <algorithm>
#include <cmath>

namespace powershape::telemetry {

std::vector<std::pair<std::size_t, std::size_t>> alike_runs(
    const std::vector<std::vector<double>>& periods,
    const std::vector<std::vector<double>>& slack) {
  const auto alike = [&](std::size_t a, std::size_t b) {
    if (periods[a].size() != periods[b].size()) return false;
    for (std::size_t k = 0; k < periods[a].size(); ++k) {
      const double within = std::max({0.1 * periods[a][k], slack[a][k], slack[b][k]});
      if (std::abs(periods[a][k] - periods[b][k]) > within) return false;
    }
    return true;
  };
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  for (std::size_t g = 0; g < periods.size();) {
    std::size_t end = g + 1;
    while (end < periods.size() && alike(g, end)) ++end;
    runs.emplace_back(g, end);
    g = end;
  }
  return runs;
}

std::vector<UpdatePeriods> update_periods(const Sampler& sampler,
                                          const std::vector<DeviceInfo>& devices) {
  std::vector<std::vector<std::pair<Signal, double>>> each(devices.size());
  std::vector<std::vector<double>> periods(devices.size()), slack(devices.size());
  for (std::size_t g = 0; g < devices.size(); ++g) {
    const int gpu = static_cast<int>(g);
    for (auto s : {Signal::kPowerUsage, Signal::kPowerInstant, Signal::kEnergy, Signal::kSmClock,
                   Signal::kDriverPower}) {
      if (auto p = sampler.update_period_ns(gpu, s)) {
        each[g].emplace_back(s, static_cast<double>(*p) * 1e-6);
        periods[g].push_back(static_cast<double>(*p));
        slack[g].push_back(static_cast<double>(sampler.read_period_ns(gpu, s)));
      }
    }
  }
  std::vector<UpdatePeriods> rows;
  for (const auto& [begin, end] : alike_runs(periods, slack)) {
    if (each[begin].empty()) continue;
    rows.push_back({devices[begin].index, devices[end - 1].index, each[begin]});
  }
  return rows;
}

}  // namespace powershape::telemetry
