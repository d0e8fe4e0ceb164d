#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "powershape/telemetry/source.hpp"

namespace powershape::telemetry {

// Jetson power rails read from INA3221 monitors under /sys/class/hwmon (in<k>_input in mV,
// curr<k>_input in mA, in<k>_label naming the rail). The rail whose label names the GPU gives
// kPowerInstant; the board input rail (label starting with VIN), or else the sum of all rails,
// gives kPowerUsage. One device.
class HwmonSource final : public Source {
 public:
  struct Rail {
    std::string label;
    std::filesystem::path voltage_mv;
    std::filesystem::path current_ma;
  };
  // Throws std::runtime_error when `root` holds no ina3221 monitor.
  explicit HwmonSource(const std::filesystem::path& root = "/sys/class/hwmon");
  std::string describe() const override { return "hwmon:" + root_.string(); }
  const std::vector<DeviceInfo>& devices() const override { return infos_; }
  Sample poll(int gpu, const SignalSet& which) override;
  const std::vector<Rail>& rails() const { return rails_; }

 private:
  std::filesystem::path root_;
  std::vector<Rail> rails_;
  int gpu_rail_ = -1;
  int input_rail_ = -1;
  std::vector<DeviceInfo> infos_;
};

}  // namespace powershape::telemetry
