#include "powershape/advise/settings_backend.hpp"

#include <memory>
#include <utility>

#include "powershape/util/error.hpp"
#include "powershape/util/signals.hpp"

namespace powershape::advise {

SettingsBackend::SettingsBackend(experiment::Backend& inner, std::size_t inner_config,
                                 SettingsTarget& target, std::vector<Setting> settings,
                                 std::string record_dir)
    : inner_(inner),
      inner_config_(inner_config),
      target_(target),
      settings_(std::move(settings)),
      record_dir_(std::move(record_dir)) {
  if (settings_.empty()) throw invalid_input("settings", "none to measure");
  if (inner_config_ >= inner_.config_count())
    throw invalid_input("configuration", std::to_string(inner_config_) + " is not one of the " +
                                             std::to_string(inner_.config_count()) + " given");
}

std::string SettingsBackend::describe() const {
  return inner_.describe() + ", settings on " + target_.describe();
}

void SettingsBackend::set_configs(std::vector<workload::Plan> /*configs*/) {
  throw invalid_input("configurations", "a settings experiment's are its settings");
}

experiment::Measurement SettingsBackend::measure(std::size_t i, double seconds) {
  const Setting& s = settings_.at(i);
  // A signal between runs ends the design before anything more is set.
  if (util::received_signal() != 0) throw device_error("interrupted");
  std::unique_ptr<Applied> held;
  if (!s.is_default()) held = std::make_unique<Applied>(target_, s, record_dir_);
  experiment::Measurement m = inner_.measure(inner_config_, seconds);
  m.config = i;
  return m;
}

}  // namespace powershape::advise
