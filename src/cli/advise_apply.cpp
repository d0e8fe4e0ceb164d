#include "advise_apply.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "powershape/advise/apply.hpp"
#include "powershape/util/child.hpp"
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
  util::forward_signals_to(0);  // caught from here on, so that the setting is put back
  std::unique_ptr<advise::Applied> held;
  if (!s.is_default()) {
    held = std::make_unique<advise::Applied>(*target, s, advise::state_dir());
    std::printf("powershape: set %s on %s\n", s.describe().c_str(), target->describe().c_str());
  }
  std::fflush(stdout);
  int code = 0;
  if (!a.command.empty()) {
    util::Child child(a.command, {});
    util::forward_signals_to(child.pid());
    while (!child.poll()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    code = child.exit_code();
  } else {
    std::printf("powershape: holding it; Ctrl-C (or SIGTERM) puts it back\n");
    std::fflush(stdout);
    while (util::received_signal() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    code = 128 + util::received_signal();
  }
  if (held) {
    held->restore();
    std::printf("powershape: put %s back as it was\n", target->describe().c_str());
  }
  return code;
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
