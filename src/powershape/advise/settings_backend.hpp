#pragma once
// Settings as the configurations of an experiment: configuration i runs one configuration of an
// inner backend (a command, a workload) with settings[i] applied for that run alone, recorded
// before it is set and put back after it (Applied), the default setting (as found) with nothing
// set. advise's sweep and optimize's check of the setting it predicts are then designs that
// experiment::run_design runs as it runs `compare`: rounds, a warm-up, ratio intervals.
#include <cstddef>
#include <string>
#include <vector>

#include "powershape/advise/apply.hpp"
#include "powershape/advise/setting.hpp"
#include "powershape/experiment/backend.hpp"

namespace powershape::advise {

class SettingsBackend final : public experiment::Backend {
 public:
  // inner, target: outlive this. Throws naming what is wrong: no settings, or no such
  // configuration of the inner backend.
  SettingsBackend(experiment::Backend& inner, std::size_t inner_config, SettingsTarget& target,
                  std::vector<Setting> settings, std::string record_dir);

  std::string describe() const override;
  bool simulated() const override { return inner_.simulated(); }
  double ratio_error() const override { return inner_.ratio_error(); }
  double thermal_time_constant_s() const override { return inner_.thermal_time_constant_s(); }
  nlohmann::json device_json() const override { return inner_.device_json(); }
  workload::Rates peak_rates() const override { return inner_.peak_rates(); }
  // The configurations are the settings: refused.
  void set_configs(std::vector<workload::Plan> configs) override;
  std::size_t config_count() const override { return settings_.size(); }
  std::string config_name(std::size_t i) const override { return settings_.at(i).describe(); }
  const Setting& setting(std::size_t i) const { return settings_.at(i); }
  // The inner configuration's run under settings[i]; the setting is back as found when it returns
  // or throws.
  experiment::Measurement measure(std::size_t i, double seconds) override;
  void idle(double seconds) override { inner_.idle(seconds); }
  std::optional<double> temperature_c() override { return inner_.temperature_c(); }
  int64_t now_ns() const override { return inner_.now_ns(); }
  trace::Trace recorded() override { return inner_.recorded(); }

 private:
  experiment::Backend& inner_;
  std::size_t inner_config_;
  SettingsTarget& target_;
  std::vector<Setting> settings_;
  std::string record_dir_;
};

}  // namespace powershape::advise
