#include "powershape/advise/hold.hpp"

#include <chrono>
#include <memory>
#include <thread>

#include "powershape/util/child.hpp"
#include "powershape/util/signals.hpp"

namespace powershape::advise {

int hold_while(SettingsTarget& target, const Setting& s, const std::string& record_dir,
               const std::vector<std::string>& command,
               const std::function<void(const std::string&)>& say) {
  util::forward_signals_to(0);  // caught from here on, so that the setting is put back
  std::unique_ptr<Applied> held;
  if (!s.is_default()) {
    held = std::make_unique<Applied>(target, s, record_dir);
    say("set " + s.describe() + " on " + target.describe());
  }
  int code = 0;
  if (held && util::received_signal() != 0) {
    code = 128 + util::received_signal();  // came while it was being set: nothing more starts
  } else if (!command.empty()) {
    util::Child child(command, {});
    util::forward_signals_to(child.pid());
    // One that came between the check above and this forward is passed on now.
    if (const int sig = util::received_signal(); sig != 0) child.signal(sig);
    while (!child.poll()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    util::forward_signals_to(0);
    code = child.exit_code();
  } else {
    say("holding it; Ctrl-C (or SIGTERM, or a hang-up) puts it back");
    while (util::received_signal() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    code = 128 + util::received_signal();
  }
  if (held) {
    held->restore();
    say("put " + target.describe() + " back as it was");
  }
  return code;
}

std::unique_ptr<SettingsTarget> target_for(const std::string& sysfs, int gpu) {
  const std::string devfreq = find_jetson_devfreq(sysfs);
  return devfreq.empty() ? nvml_target(gpu) : devfreq_target(devfreq);
}

std::vector<std::string> restore_left(const std::string& sysfs, bool force) {
  return restore_leftovers(
      state_dir(),
      [&](const nlohmann::json& t) { return open_target(t, "libnvidia-ml.so.1", sysfs); }, force);
}

int apply_and_hold(const std::string& sysfs, int gpu, const Setting& s,
                   const std::vector<std::string>& command,
                   const std::function<void(const std::string&)>& say) {
  for (const auto& l : restore_left(sysfs, false)) say(l);
  if (s.is_default()) {
    say("nothing to set (the GPU as found is the recommendation)");
    if (command.empty()) return 0;
  }
  auto target = target_for(sysfs, gpu);
  return hold_while(*target, s, state_dir(), command, say);
}

}  // namespace powershape::advise
