#pragma once
// Applying a setting, only when asked, and always undoing it: the previous setting is written to
// a restore record on disk before anything changes, put back when the holder goes (normal exit,
// a signal its owner catches), and a record left by a run that crashed is honoured by the next
// run (restore_leftovers). NVML for data-centre GPUs (power limit, locked SM clocks), a Jetson's
// GPU devfreq for its clock cap.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "powershape/advise/setting.hpp"

namespace powershape::advise {

// Where settings are written.
class SettingsTarget {
 public:
  virtual ~SettingsTarget() = default;
  virtual std::string describe() const = 0;
  // What restore() needs to put back what setting `s` changes, as it is now: {"target": ...}.
  virtual nlohmann::json snapshot(const Setting& s) = 0;
  // Throws std::runtime_error in one line (a missing permission named as such).
  virtual void set(const Setting& s) = 0;
  virtual void restore(const nlohmann::json& snapshot) = 0;
};

// GPU `gpu` through NVML (library at `nvml_path`). Locked clocks cannot be read back from NVML,
// so restoring a clock cap resets them: a GPU whose clocks someone else had locked comes back
// unlocked. Blackwell's power smoothing (power_smoothing.hpp) is set and put back here too.
std::unique_ptr<SettingsTarget> nvml_target(int gpu,
                                            const std::string& nvml_path = "libnvidia-ml.so.1");
// A Jetson: a clock cap writes its GPU devfreq folder's max_freq (cur_freq, max_freq,
// available_frequencies, in Hz; the highest available frequency at or under the cap); a power
// mode runs `nvpmodel -m ID` ($POWERSHAPE_NVPMODEL, else nvpmodel on PATH; the AGX Orin's ids:
// MAXN 0, 15W 1, 30W 2, 50W 3), the mode before read with `nvpmodel -q` and set back. A power
// limit is refused: a Jetson's budget is its mode.
std::unique_ptr<SettingsTarget> devfreq_target(const std::string& dir);
// The devfreq folder of this machine's Jetson GPU under `sysfs_root` ("" when none).
std::string find_jetson_devfreq(const std::string& sysfs_root = "/sys");

// Where restore records live: $POWERSHAPE_STATE_DIR, else /var/lib/powershape for root, else
// $XDG_STATE_HOME/powershape or ~/.local/state/powershape.
std::string state_dir();

// A setting held: recorded, then set; restored (and the record removed) by restore() or the
// destructor.
class Applied {
 public:
  Applied(SettingsTarget& target, const Setting& s, const std::string& record_dir);
  ~Applied();
  Applied(const Applied&) = delete;
  Applied& operator=(const Applied&) = delete;
  void restore();

 private:
  SettingsTarget& target_;
  nlohmann::json snapshot_;
  std::string record_;
  bool held_ = false;
};

// Restores what records in `record_dir` from runs no longer running say, opening each one's
// target with `open` (its "target" object as given at record time); returns a line for each
// record restored or left to a holder still running. Records are read as restore_record.hpp
// says; one that cannot be read or restored stays and, after the others, is reported in one
// line (an error) with what to do; with `force` it is removed instead, and its line says so.
std::vector<std::string> restore_leftovers(
    const std::string& record_dir,
    const std::function<std::unique_ptr<SettingsTarget>(const nlohmann::json&)>& open,
    bool force = false);
// The target a record names: {"kind": "nvml", "gpu": N}, or {"kind": "devfreq", "dir": D} when D
// is this machine's Jetson GPU devfreq folder under `sysfs_root` (resolved: no other path).
std::unique_ptr<SettingsTarget> open_target(const nlohmann::json& target,
                                            const std::string& nvml_path = "libnvidia-ml.so.1",
                                            const std::string& sysfs_root = "/sys");

}  // namespace powershape::advise
