#pragma once
// A setting held around a program: set (recorded first), the command run under it to its end, or,
// without one, kept until SIGINT, SIGTERM or SIGHUP; then put back whatever happened: `advise
// --apply`.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "powershape/advise/apply.hpp"
#include "powershape/advise/setting.hpp"

namespace powershape::advise {

// Returns the command's exit code, or 128 + the signal that ended a hold without one (or came
// while the setting was being set: the command then does not start). The
// default setting (as found) sets nothing. `say` hears each step in a line: what was set on what,
// that it is held until a signal, that it was put back. Throws when the setting cannot be set
// (nothing then changed) or the command cannot be started (the setting is back).
int hold_while(SettingsTarget& target, const Setting& s, const std::string& record_dir,
               const std::vector<std::string>& command,
               const std::function<void(const std::string&)>& say);

// Where a setting goes: a Jetson's GPU devfreq under `sysfs` where there is one, else NVML's GPU
// `gpu`.
std::unique_ptr<SettingsTarget> target_for(const std::string& sysfs, int gpu);
// What runs that did not finish left set (their records in state_dir()), put back; a line each.
// force: records that cannot be read or restored are removed (each named) instead of stopping.
std::vector<std::string> restore_left(const std::string& sysfs, bool force);
// restore_left's lines said first, then `s` held on target_for's target (hold_while): the
// default setting sets nothing, and without a command that is all.
int apply_and_hold(const std::string& sysfs, int gpu, const Setting& s,
                   const std::vector<std::string>& command,
                   const std::function<void(const std::string&)>& say);

}  // namespace powershape::advise
