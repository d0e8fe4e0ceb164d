#include "powershape/telemetry/hwmon_source.hpp"

#include <algorithm>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/input_file.hpp"
#include "powershape/util/lines.hpp"

namespace powershape::telemetry {
namespace fs = std::filesystem;
namespace {

// A sensor file's first line; none where it is missing, unreadable or not a regular file (a FIFO
// or a device planted in a named folder would block or never end).
std::optional<std::string> read_line(const fs::path& p) {
  try {
    std::ifstream in;
    util::open_input(p.string(), in);
    std::string line;
    if (!util::read_line(in, line, p.string())) return std::nullopt;
    return line;
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

std::optional<int64_t> read_int(const fs::path& p) {
  auto line = read_line(p);
  if (!line) return std::nullopt;
  try {
    return std::stoll(*line);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

HwmonSource::HwmonSource(const fs::path& root) : root_(root) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root, ec)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    if (read_line(dir / "name").value_or("") != "ina3221") continue;
    for (int k = 1; k <= 8; ++k) {
      auto label = read_line(dir / ("in" + std::to_string(k) + "_label"));
      fs::path v = dir / ("in" + std::to_string(k) + "_input");
      fs::path c = dir / ("curr" + std::to_string(k) + "_input");
      if (!label || !fs::exists(v) || !fs::exists(c)) continue;
      rails_.push_back({*label, v, c});
    }
  }
  if (rails_.empty()) {
    throw unsupported("no INA3221 power rails under " + root.string() +
                      " (expected hwmon*/name = ina3221 with in<k>_label, in<k>_input, "
                      "curr<k>_input)");
  }
  for (std::size_t i = 0; i < rails_.size(); ++i) {
    const std::string& l = rails_[i].label;
    if (gpu_rail_ < 0 && l.find("GPU") != std::string::npos) gpu_rail_ = static_cast<int>(i);
    if (input_rail_ < 0 && l.rfind("VIN", 0) == 0) input_rail_ = static_cast<int>(i);
  }
  DeviceInfo info;
  info.name = "Jetson (INA3221 rails)";
  for (auto* r :
       {&info.power_limit_mw, &info.enforced_power_limit_mw, &info.min_power_limit_mw,
        &info.max_power_limit_mw, &info.max_sm_clock_mhz, &info.max_mem_clock_mhz,
        &info.temp_slowdown_c, &info.temp_shutdown_c, &info.temp_gpu_max_c, &info.temp_mem_max_c}) {
    *r = Reading::failed(Status::kNotSupported);
  }
  info.support.fill(Status::kNotSupported);
  info.support[static_cast<std::size_t>(Signal::kPowerUsage)] = Status::kOk;
  if (gpu_rail_ >= 0) info.support[static_cast<std::size_t>(Signal::kPowerInstant)] = Status::kOk;
  infos_.push_back(info);
}

Sample HwmonSource::poll(int gpu, const SignalSet& /*which: every rail is cheap*/) {
  Sample s;
  s.gpu = gpu;
  s.t_ns = steady_now_ns();
  for (std::size_t i = 0; i < kSignalCount; ++i) {
    if (infos_[0].support[i] != Status::kOk) s.readings[i] = Reading::failed(Status::kNotSupported);
  }
  int64_t total_mw = 0;
  bool all_ok = true;
  std::optional<int64_t> gpu_mw, input_mw;
  for (std::size_t i = 0; i < rails_.size(); ++i) {
    auto mv = read_int(rails_[i].voltage_mv);
    auto ma = read_int(rails_[i].current_ma);
    if (!mv || !ma) {
      all_ok = false;
      continue;
    }
    int64_t mw = *mv * *ma / 1000;
    total_mw += mw;
    if (static_cast<int>(i) == gpu_rail_) gpu_mw = mw;
    if (static_cast<int>(i) == input_rail_) input_mw = mw;
  }
  if (input_rail_ >= 0) {
    s[Signal::kPowerUsage] = input_mw ? Reading::of(*input_mw) : Reading::failed(Status::kError);
  } else {
    s[Signal::kPowerUsage] = all_ok ? Reading::of(total_mw) : Reading::failed(Status::kError);
  }
  if (gpu_rail_ >= 0) {
    s[Signal::kPowerInstant] = gpu_mw ? Reading::of(*gpu_mw) : Reading::failed(Status::kError);
  }
  return s;
}

}  // namespace powershape::telemetry
