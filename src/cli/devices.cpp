#include <cstdio>
#include <memory>
#include <string>

#include "powershape/sim/sim_source.hpp"
#include "powershape/trace/json_codec.hpp"
#include "subcommands.hpp"

namespace powershape::cli {
namespace {

std::string show(const telemetry::Reading& r, double scale, const char* unit) {
  if (!r.ok()) {
    auto tok = telemetry::status_token(r.status);
    return tok.empty() ? "[N/A]" : std::string(tok);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g %s", static_cast<double>(r.value) * scale, unit);
  return buf;
}

void print(const telemetry::DeviceInfo& d) {
  std::printf("GPU %d: %s\n", d.index, d.name.c_str());
  if (!d.uuid.empty()) std::printf("  uuid            %s\n", d.uuid.c_str());
  if (!d.driver.empty()) std::printf("  driver          %s\n", d.driver.c_str());
  std::printf(
      "  power limit     %s (enforced %s, range %s .. %s)\n",
      show(d.power_limit_mw, 1e-3, "W").c_str(), show(d.enforced_power_limit_mw, 1e-3, "W").c_str(),
      show(d.min_power_limit_mw, 1e-3, "W").c_str(), show(d.max_power_limit_mw, 1e-3, "W").c_str());
  std::printf("  max clocks      SM %s, memory %s\n", show(d.max_sm_clock_mhz, 1, "MHz").c_str(),
              show(d.max_mem_clock_mhz, 1, "MHz").c_str());
  std::printf("  temperatures    slowdown %s, shutdown %s, GPU max %s, memory max %s\n",
              show(d.temp_slowdown_c, 1, "C").c_str(), show(d.temp_shutdown_c, 1, "C").c_str(),
              show(d.temp_gpu_max_c, 1, "C").c_str(), show(d.temp_mem_max_c, 1, "C").c_str());
  std::string yes, no;
  for (const auto& s : telemetry::signal_specs()) {
    auto st = d.support[static_cast<std::size_t>(s.signal)];
    (st == telemetry::Status::kOk ? yes : no) += std::string(s.name) + " ";
  }
  std::printf("  signals         %s\n", yes.c_str());
  if (!no.empty()) std::printf("  not supported   %s\n", no.c_str());
}

}  // namespace

void add_devices(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List GPUs, their limits and the signals they support");
  static std::string source = "nvml";
  static bool json = false;
  cmd->add_option("--source", source,
                  "nvml, fake:TRACE.csv (fake:h200/gemm_sustained: a shipped one), hwmon[:ROOT] or "
                  "sim:PROFILE");
  cmd->add_flag("--json", json, "Print JSON instead of text");
  cmd->callback([] {
    auto src = sim::open_source(source, {});
    if (json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& d : src->devices()) j.push_back(trace::to_json(d));
      std::printf("%s\n", j.dump(1).c_str());
    } else {
      std::printf("source: %s\n", src->describe().c_str());
      for (const auto& d : src->devices()) print(d);
    }
    exit_code() = 0;
  });
}

}  // namespace powershape::cli
