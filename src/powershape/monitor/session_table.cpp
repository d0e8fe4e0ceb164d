#include "powershape/monitor/session_table.hpp"

#include <string>

namespace powershape::monitor {

void print_sampler(std::FILE* out, const Session& session) {
  const auto st = session.sampler_stats();
  std::fprintf(out, " sampler: %llu rounds, %llu late, %llu rows dropped, %.2f%% of one core\n",
               static_cast<unsigned long long>(st.polls), static_cast<unsigned long long>(st.late),
               static_cast<unsigned long long>(st.dropped),
               st.wall_ns > 0
                   ? 100.0 * static_cast<double>(st.cpu_ns) / static_cast<double>(st.wall_ns)
                   : 0.0);
  // Each GPU's update periods; a run of GPUs alike (a node of one model) on one line.
  for (const auto& row : session.update_periods()) {
    std::string periods;
    for (const auto& [signal, ms] : row.period_ms) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s %.1f ms,",
                    std::string(telemetry::spec(signal).name).c_str(), ms);
      periods += buf;
    }
    periods.pop_back();
    if (row.last_gpu != row.first_gpu)
      std::fprintf(out, " GPUs %d-%d update periods:%s\n", row.first_gpu, row.last_gpu,
                   periods.c_str());
    else
      std::fprintf(out, " GPU %d update periods:%s\n", row.first_gpu, periods.c_str());
  }
}

}  // namespace powershape::monitor
