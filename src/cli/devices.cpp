#include <cstdio>
#include <string>

#include "powershape/sim/sim_source.hpp"
#include "powershape/telemetry/device_table.hpp"
#include "powershape/trace/json_codec.hpp"
#include "subcommands.hpp"

namespace powershape::cli {

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
      for (const auto& d : src->devices()) telemetry::print_device(stdout, d);
    }
    exit_code() = 0;
  });
}

}  // namespace powershape::cli
