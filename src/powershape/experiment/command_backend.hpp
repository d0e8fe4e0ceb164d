#pragma once
// A user's commands as the experiment engine's configurations: measuring one runs it to its end
// in a monitor::Session that records GPU telemetry the whole time, and reports its wall time as the
// time per iteration (one iteration a run) and its energy, power, clock and throttling from the
// telemetry over the run. A command that marks regions (`powershape mark`, the C API, the Python
// Monitor, all through POWERSHAPE_CONTROL) is measured by them instead: each region of the chosen
// name is an iteration, its time and energy the regions' own, so that start-up is left out.
#include <memory>
#include <string>
#include <vector>

#include "powershape/experiment/backend.hpp"
#include "powershape/monitor/session.hpp"
#include "powershape/telemetry/region.hpp"
#include "powershape/telemetry/source.hpp"
#include "powershape/trace/recording.hpp"

namespace powershape::experiment {

// The commands after `--`, separated by ":::", or one command run once per value of a scan
// (scan = {NAME, "V1,V2,..."}: {NAME} replaced). Throws with a one-line reason.
std::vector<std::vector<std::string>> commands_from(const std::vector<std::string>& words,
                                                    const std::vector<std::string>& scan);

class CommandBackend final : public Backend {
 public:
  // commands: argv lists; source: what open_source opens (nvml, fake:TRACE.csv, hwmon[:ROOT]).
  // region: the regions' name to measure by; empty: the first name a command marks, if any.
  // Its runs are a monitor::Session's: marks that cannot be read (a malformed line, an end
  // without a begin) and the sampler's events go to `warn`, each run's marks on to an enclosing
  // recorder's $POWERSHAPE_CONTROL.
  CommandBackend(std::vector<std::vector<std::string>> commands, const std::string& source,
                 std::string region = "", trace::Warn warn = {});
  ~CommandBackend() override;
  std::string describe() const override;
  bool simulated() const override { return false; }
  nlohmann::json device_json() const override;
  workload::Rates peak_rates() const override { return {0, 0}; }
  void set_configs(std::vector<workload::Plan>) override {}
  std::size_t config_count() const override { return commands_.size(); }
  // The command's words, or the name set_names gave it.
  std::string config_name(std::size_t i) const override;
  // Names for the configurations (measurements, the engine's results and each run's region carry
  // them; errors still quote the command), one a command.
  void set_names(std::vector<std::string> names);
  // Runs command i once (seconds is not used: a run lasts what it lasts); throws naming the
  // command when it cannot start or exits non-zero.
  Measurement measure(std::size_t i, double seconds) override;
  void idle(double seconds) override;
  std::optional<double> temperature_c() override;
  int64_t now_ns() const override;
  // The telemetry so far, with each run a region named after its configuration.
  trace::Trace recorded() override;
  // A run still going at `steady_ns` (telemetry::steady_now_ns) is stopped (SIGTERM, SIGKILL
  // 2 s later) and measure() throws a device_error saying the deadline passed; 0: none.
  void set_deadline(int64_t steady_ns) { deadline_ns_ = steady_ns; }
  // The regions measured by (the steps), of every run so far, at most kMaxSteps (the latest).
  const std::vector<telemetry::Region>& steps() const { return steps_; }
  static constexpr std::size_t kMaxSteps = 100000;
  // A run's iterations are measured in at most this many energy windows, and at most
  // RegionStack::kMaxOpen regions wait for their end (the session's): a job that marks a million
  // steps a second is measured in bounded time and memory.
  static constexpr std::size_t kMaxWindows = 1000;

 private:
  std::string command_text(std::size_t i) const;
  std::vector<std::vector<std::string>> commands_;
  std::vector<std::string> names_;
  std::string region_;
  std::unique_ptr<telemetry::Source> source_;
  std::unique_ptr<monitor::Session> session_;  // the sampler, the marks and the trace
  std::vector<telemetry::Region> steps_;
  int64_t deadline_ns_ = 0;
};

}  // namespace powershape::experiment
