#include "powershape/trace/open_source.hpp"

#include <cstdio>
#include <stdexcept>

#include "powershape/telemetry/hwmon_source.hpp"
#include "powershape/telemetry/nvml_source.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/recording_name.hpp"
#include "powershape/trace/replay_source.hpp"
#include "powershape/util/error.hpp"

namespace powershape::trace {

std::unique_ptr<telemetry::Source> open_source(const std::string& spec,
                                               const std::vector<int>& gpus) {
  if (spec == "nvml") return std::make_unique<telemetry::NvmlSource>(gpus);
  if (spec.rfind("fake:", 0) == 0) {
    const std::string name = spec.substr(5);
    if (name.empty())
      throw invalid_input("source", "fake: needs a trace file or a shipped recording (fake:" +
                                        std::string("TRACE.csv; shipped: ") + recording_names() +
                                        ")");
    if (!gpus.empty()) throw invalid_input("gpus", "GPU indices apply to the nvml source only");
    const std::string path = recording_path(name);
    Trace t;
    try {
      t = read_csv(path);
    } catch (const Error& e) {
      if (path != name) throw;
      // Neither a file nor a shipped recording: say which are shipped.
      throw Error(e.kind(),
                  std::string(e.what()) + " (shipped recordings: " + recording_names() + ")");
    }
    for (const auto& e : t.events) {
      if (e.what.rfind(kTornPrefix, 0) == 0)
        std::fprintf(stderr, "powershape: warning: %s\n", e.what.c_str());
    }
    return std::make_unique<ReplaySource>(std::move(t), path);
  }
  if (spec == "hwmon" || spec.rfind("hwmon:", 0) == 0) {
    if (!gpus.empty()) throw invalid_input("gpus", "GPU indices apply to the nvml source only");
    return std::make_unique<telemetry::HwmonSource>(spec.size() > 6 ? spec.substr(6)
                                                                    : "/sys/class/hwmon");
  }
  throw invalid_input(
      "source", "unknown source '" + spec + "' (expected nvml, fake:TRACE.csv or hwmon[:ROOT])");
}

}  // namespace powershape::trace
