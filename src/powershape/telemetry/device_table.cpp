#include "powershape/telemetry/device_table.hpp"

#include <string>

#include "powershape/telemetry/signal.hpp"

namespace powershape::telemetry {
namespace {

std::string show(const Reading& r, double scale, const char* unit) {
  if (!r.ok()) {
    auto tok = status_token(r.status);
    return tok.empty() ? "[N/A]" : std::string(tok);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g %s", static_cast<double>(r.value) * scale, unit);
  return buf;
}

}  // namespace

void print_device(std::FILE* out, const DeviceInfo& d) {
  std::fprintf(out, "GPU %d: %s\n", d.index, d.name.c_str());
  if (!d.uuid.empty()) std::fprintf(out, "  uuid            %s\n", d.uuid.c_str());
  if (!d.driver.empty()) std::fprintf(out, "  driver          %s\n", d.driver.c_str());
  std::fprintf(
      out, "  power limit     %s (enforced %s, range %s .. %s)\n",
      show(d.power_limit_mw, 1e-3, "W").c_str(), show(d.enforced_power_limit_mw, 1e-3, "W").c_str(),
      show(d.min_power_limit_mw, 1e-3, "W").c_str(), show(d.max_power_limit_mw, 1e-3, "W").c_str());
  std::fprintf(out, "  max clocks      SM %s, memory %s\n",
               show(d.max_sm_clock_mhz, 1, "MHz").c_str(),
               show(d.max_mem_clock_mhz, 1, "MHz").c_str());
  std::fprintf(out, "  temperatures    slowdown %s, shutdown %s, GPU max %s, memory max %s\n",
               show(d.temp_slowdown_c, 1, "C").c_str(), show(d.temp_shutdown_c, 1, "C").c_str(),
               show(d.temp_gpu_max_c, 1, "C").c_str(), show(d.temp_mem_max_c, 1, "C").c_str());
  std::string yes, no;
  for (const auto& s : signal_specs()) {
    auto st = d.support[static_cast<std::size_t>(s.signal)];
    (st == Status::kOk ? yes : no) += std::string(s.name) + " ";
  }
  std::fprintf(out, "  signals         %s\n", yes.c_str());
  if (!no.empty()) std::fprintf(out, "  not supported   %s\n", no.c_str());
}

}  // namespace powershape::telemetry
