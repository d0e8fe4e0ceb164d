#include "source_spec.hpp"

#include <charconv>
#include <stdexcept>

#include "powershape/telemetry/hwmon_source.hpp"
#include "powershape/telemetry/nvml_source.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/replay_source.hpp"

namespace powershape::cli {

std::unique_ptr<telemetry::Source> open_source(const std::string& spec,
                                               const std::vector<int>& gpus) {
  if (spec == "nvml") return std::make_unique<telemetry::NvmlSource>(gpus);
  if (spec.rfind("fake:", 0) == 0) {
    std::string path = spec.substr(5);
    if (path.empty()) throw std::runtime_error("--source fake: needs a trace file (fake:TRACE.csv)");
    if (!gpus.empty()) throw std::runtime_error("--gpus applies to --source nvml only");
    return std::make_unique<trace::ReplaySource>(trace::read_csv(path), path);
  }
  if (spec == "hwmon" || spec.rfind("hwmon:", 0) == 0) {
    if (!gpus.empty()) throw std::runtime_error("--gpus applies to --source nvml only");
    return std::make_unique<telemetry::HwmonSource>(spec.size() > 6 ? spec.substr(6)
                                                                    : "/sys/class/hwmon");
  }
  throw std::runtime_error("unknown --source '" + spec + "' (expected nvml, fake:TRACE.csv or hwmon[:ROOT])");
}

std::vector<int> parse_int_list(const std::string& list, const std::string& option) {
  std::vector<int> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int v = -1;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || v < 0) {
      throw std::runtime_error(option + ": expected comma-separated non-negative integers like 0,1, found '" + list + "'");
    }
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace powershape::cli
