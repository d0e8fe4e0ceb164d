#include "advise_apply.hpp"

#include <cstdio>

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

namespace {

void say(const std::string& line) {
  std::printf("powershape: %s\n", line.c_str());
  std::fflush(stdout);  // what was said comes before the command's own output
}

}  // namespace

int restore_left(const ApplyArgs& a) {
  const auto lines = advise::restore_left(a.sysfs, a.force);
  for (const auto& l : lines) say(l);
  if (lines.empty()) say("nothing to restore in " + advise::state_dir());
  return 0;
}

void restore_first(const std::string& sysfs) {
  for (const auto& l : advise::restore_left(sysfs, false)) say(l);
}

int apply_setting(const ApplyArgs& a, const advise::Setting& s) {
  try {
    return advise::apply_and_hold(a.sysfs, a.gpu, s, a.command, say);
  } catch (const std::exception& e) {
    rethrow_with("--apply: ", e);
  }
}

}  // namespace powershape::cli
