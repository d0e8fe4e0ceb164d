#include "powershape/analysis/job_energy_table.hpp"

#include <algorithm>
#include <string>

#include "powershape/util/printable.hpp"

namespace powershape::analysis {

// The CPU's line under the GPUs' summaries, and the whole node's energy where both are known.
void print_cpu_energy(std::FILE* out, const nlohmann::json& cpu,
                      const telemetry::RaplCounters& rapl,
                      const std::vector<analysis::Summary>& summaries) {
  if (cpu.is_null()) return;
  if (!rapl.unreadable().empty()) {
    std::fprintf(out, " CPU (RAPL): %s\n", rapl.unreadable().c_str());
    return;
  }
  std::string line;
  double cpu_j = 0;
  for (const auto& [zone, j] : cpu.items()) {
    line += (line.empty() ? "" : ", ") + zone + " " + util::printable(j.get<double>()) + " J";
    cpu_j += j.get<double>();
  }
  double gpu_j = 0;
  bool gpus_known = !summaries.empty();
  for (const auto& s : summaries) {
    if (s.name != "all") continue;
    if (s.energy.method == analysis::Energy::Method::kNone) gpus_known = false;
    gpu_j += s.energy.energy_mj * 1e-3;
  }
  std::fprintf(out, " CPU (RAPL): %s", line.c_str());
  if (gpus_known)
    std::fprintf(out, "; with the GPUs' %s J, %s J", util::printable(gpu_j).c_str(),
                 util::printable(gpu_j + cpu_j).c_str());
  std::fprintf(out, "\n");
}

// A line a GPU under the summaries: its energy by process, the most first.
void print_by_process(std::FILE* out, std::vector<ProcessEnergy> v) {
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.gpu != b.gpu ? a.gpu < b.gpu : a.joules > b.joules;
  });
  for (std::size_t i = 0; i < v.size();) {
    std::string line;
    const int gpu = v[i].gpu;
    for (; i < v.size() && v[i].gpu == gpu; ++i) {
      const auto& e = v[i];
      line += line.empty() ? "" : ", ";
      char figures[96];
      std::snprintf(figures, sizeof figures, " %.1f J", e.joules);
      if (e.pid >= 0)
        line += e.name.empty() ? "pid " + std::to_string(e.pid)
                               : e.name + " (pid " + std::to_string(e.pid) + ")";
      else
        line += e.name;  // "no process busy", "other processes"
      line += figures;
      if (e.pid != analysis::kNoProcess) {
        std::snprintf(figures, sizeof figures, ", %.1f s busy", e.busy_s);
        line += figures;
      }
    }
    std::fprintf(out, " GPU %d by process (its SM time a second; not each one's power): %s\n", gpu,
                 line.c_str());
  }
}

void print_energy_per_token(std::FILE* out, const nlohmann::json& per_token,
                            double tokens_per_step) {
  if (!per_token.is_null()) {
    std::fprintf(out,
                 " energy a token: %s mJ in the steps, %s mJ over the run (GPUs; %s steps of %s "
                 "tokens)",
                 util::printable(per_token["gpu_j_per_token_in_steps"].get<double>() * 1e3).c_str(),
                 util::printable(per_token["gpu_j_per_token"].get<double>() * 1e3).c_str(),
                 util::printable(per_token["steps"].get<double>()).c_str(),
                 util::printable(tokens_per_step).c_str());
    if (per_token.contains("node_j_per_token"))
      std::fprintf(out, "; %s mJ with the CPUs",
                   util::printable(per_token["node_j_per_token"].get<double>() * 1e3).c_str());
    std::fprintf(out, "\n");
  }
}

}  // namespace powershape::analysis
