#include "powershape/analysis/job_energy.hpp"

#include <algorithm>

namespace powershape::analysis {

nlohmann::json cpu_energy(const telemetry::RaplCounters& rapl,
                          const std::vector<std::optional<uint64_t>>& from,
                          const std::vector<std::optional<uint64_t>>& to) {
  if (rapl.zones().empty()) return nullptr;
  nlohmann::json j = nlohmann::json::object();
  const auto joules = rapl.joules(from, to);
  for (std::size_t i = 0; i < joules.size(); ++i)
    j[rapl.zones()[i].name] = joules[i] ? nlohmann::json(*joules[i]) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json energy_per_token(const trace::Trace& t, const std::vector<Summary>& summaries,
                                const nlohmann::json& cpu, double tokens_per_step) {
  if (!(tokens_per_step > 0)) return nullptr;
  const auto steps = std::count_if(t.regions.begin(), t.regions.end(),
                                   [](const trace::Region& r) { return r.name == "step"; });
  double in_steps_j = 0, all_j = 0;
  bool known = steps > 0;
  for (const auto& x : summaries) {
    if (x.energy.method == Energy::Method::kNone) known = known && x.name != "step";
    if (x.name == "step") in_steps_j += x.energy.energy_mj * 1e-3;
    if (x.name == "all") all_j += x.energy.energy_mj * 1e-3;
  }
  if (!known) return nullptr;
  const double tokens = tokens_per_step * static_cast<double>(steps);
  nlohmann::json j = {{"steps", steps},
                      {"tokens", tokens},
                      {"gpu_j_per_token_in_steps", in_steps_j / tokens},
                      {"gpu_j_per_token", all_j / tokens}};
  if (cpu.is_object()) {
    double cpu_j = 0;
    bool all = true;
    for (const auto& [zone, v] : cpu.items()) {
      all = all && v.is_number();
      if (v.is_number()) cpu_j += v.get<double>();
    }
    if (all) j["node_j_per_token"] = (all_j + cpu_j) / tokens;
  }
  return j;
}

}  // namespace powershape::analysis
