#include "advise_apply.hpp"

#include <cstdio>
#include <memory>

#include "powershape/advise/apply.hpp"
#include "powershape/advise/hold.hpp"
#include "powershape/util/error.hpp"

namespace powershape::cli {

void add_apply_options(CLI::App* cmd, ApplyArgs& a) {
  cmd->add_flag("--apply", a.apply,
                "Set the recommendation (root or CAP_SYS_ADMIN) while the command after -- runs, "
                "or until Ctrl-C, then put the previous setting back");
  cmd->add_flag("--restore", a.restore,
                "Put back settings a powershape run that did not finish left set, and exit");
  cmd->add_flag("--force", a.force,
                "With --restore: remove records that cannot be read or restored (each named) "
                "instead of stopping at them");
  cmd->add_option("--sysfs", a.sysfs, "Where a Jetson's devfreq is looked for (default /sys)");
  cmd->add_option("command", a.command, "With --apply: the command to run under the setting");
}

std::unique_ptr<advise::SettingsTarget> open_for(const ApplyArgs& a) {
  const std::string devfreq = advise::find_jetson_devfreq(a.sysfs);
  return devfreq.empty() ? advise::nvml_target(a.gpu) : advise::devfreq_target(devfreq);
}

namespace {

std::vector<std::string> restore_records(const std::string& sysfs, bool force) {
  return advise::restore_leftovers(
      advise::state_dir(),
      [&](const nlohmann::json& t) { return advise::open_target(t, "libnvidia-ml.so.1", sysfs); },
      force);
}

}  // namespace

int restore_left(const ApplyArgs& a) {
  const auto lines = restore_records(a.sysfs, a.force);
  for (const auto& l : lines) std::printf("powershape: %s\n", l.c_str());
  if (lines.empty())
    std::printf("powershape: nothing to restore in %s\n", advise::state_dir().c_str());
  return 0;
}

void restore_first(const std::string& sysfs) {
  for (const auto& l : restore_records(sysfs, false)) std::printf("powershape: %s\n", l.c_str());
}

namespace {

int apply_setting_as_asked(const ApplyArgs& a, const advise::Setting& s) {
  restore_first(a.sysfs);
  if (s.is_default()) {
    std::printf("powershape: --apply: nothing to set (the GPU as found is the recommendation)\n");
    if (a.command.empty()) return 0;
  }
  auto target = open_for(a);
  std::fflush(stdout);  // what was said comes before the command's own output
  return advise::hold_while(*target, s, advise::state_dir(), a.command, [](const std::string& l) {
    std::printf("powershape: %s\n", l.c_str());
    std::fflush(stdout);
  });
}

}  // namespace

int apply_setting(const ApplyArgs& a, const advise::Setting& s) {
  try {
    return apply_setting_as_asked(a, s);
  } catch (const std::exception& e) {
    rethrow_with("--apply: ", e);
  }
}

}  // namespace powershape::cli
