#include "advise_sweep.hpp"

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "advise_apply.hpp"
#include "advise_table.hpp"
#include "powershape/advise/apply.hpp"
#include "powershape/experiment/command_backend.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/trace/open_source.hpp"
#include "powershape/util/child.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/json_io.hpp"
#include "progress.hpp"

namespace powershape::cli {

namespace {

// What the GPU lets one set, from what NVML reports of it (clocks in 15 MHz steps, as NVIDIA's
// data-centre parts take them).
advise::SettingRange range_of(const telemetry::DeviceInfo& d) {
  if (!d.max_sm_clock_mhz.ok())
    throw unsupported("--sweep: the GPU's maximum SM clock cannot be read");
  advise::SettingRange r = advise::with_device_limits({}, d);
  r.min_mhz = r.max_mhz * advise::kLowestCapShare;
  r.clock_step_mhz = 15;
  return r;
}

}  // namespace

int sweep_settings(const SweepArgs& a) {
  if (a.command.empty()) throw invalid_input("--sweep: give the command to measure after --");
  restore_first("/sys");
  experiment::CommandBackend backend({a.command}, a.source);
  // What can be set is NVML's to say, whatever records the command's telemetry.
  const auto devices = trace::open_source("nvml", {})->devices();
  if (a.gpu < 0 || static_cast<std::size_t>(a.gpu) >= devices.size())
    throw invalid_input("--gpu: NVML sees " + std::to_string(devices.size()) + " GPU(s)");
  const advise::SettingRange range = range_of(devices[static_cast<std::size_t>(a.gpu)]);
  const auto settings = advise::candidate_settings(range, a.knobs, a.points);
  experiment::Objective objective = a.objective;
  if (objective.p_max_w <= 0) objective.p_max_w = range.default_limit_w;
  auto target = advise::nvml_target(a.gpu);
  util::forward_signals_to(0);  // a signal ends the sweep between runs; the setting is put back
  std::printf("powershape advise --sweep on %s: %zu settings x %d rounds of '%s'\n",
              target->describe().c_str(), settings.size(), a.rounds,
              backend.config_name(0).c_str());
  std::fflush(stdout);
  const auto line = progress_line("measurement", true);
  const int64_t t0 = telemetry::steady_now_ns();
  const int total = a.rounds * static_cast<int>(settings.size());
  backend.measure(0, 0);  // warm-up, as found
  std::vector<std::vector<double>> ms(settings.size()), joules(settings.size());
  for (int r = 0; r < a.rounds && util::received_signal() == 0; ++r) {
    for (std::size_t k = 0; k < settings.size() && util::received_signal() == 0; ++k) {
      // Each round starts one later, so that no setting always follows the same one.
      const std::size_t i = (k + static_cast<std::size_t>(r)) % settings.size();
      std::unique_ptr<advise::Applied> held;
      if (!settings[i].is_default())
        held = std::make_unique<advise::Applied>(*target, settings[i], advise::state_dir());
      const auto m = backend.measure(0, 0);
      ms[i].push_back(m.ms_per_iteration);
      joules[i].push_back(m.j_per_iteration());
      if (line)
        line(r * static_cast<int>(settings.size()) + static_cast<int>(k) + 1, total,
             static_cast<double>(telemetry::steady_now_ns() - t0) * 1e-9);
    }
  }
  if (util::received_signal() != 0) {
    std::printf("powershape: stopped by signal %d; every setting was put back\n",
                util::received_signal());
    return 128 + util::received_signal();
  }
  std::vector<advise::Outcome> out;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    advise::Outcome o;
    o.setting = settings[i];
    for (std::size_t r = 0; r < ms[i].size(); ++r) {
      o.ms += ms[i][r] / static_cast<double>(ms[i].size());
      o.joules += joules[i][r] / static_cast<double>(ms[i].size());
    }
    o.time_ratio = experiment::ratio_interval(ms[i], ms[0], i + 1);
    o.energy_ratio = experiment::ratio_interval(joules[i], joules[0], i + 1);
    o.mean_power_w = o.ms > 0 ? o.joules / (o.ms * 1e-3) : 0;
    out.push_back(o);
  }
  const std::size_t chosen = advise::choose(out, objective, a.max_slowdown, true);
  print_outcomes(out, chosen, "ms/run", 1);
  nlohmann::json j = {{"objective", objective.describe()}, {"outcomes", nlohmann::json::array()}};
  for (const auto& x : out) j["outcomes"].push_back(to_json(x));
  j["recommended"] = to_json(out[chosen]);
  std::printf("\nmeasured recommendation: %s (every setting put back)\n",
              out[chosen].setting.describe().c_str());
  if (!a.out.empty()) util::write_json_file(a.out, j);
  return 0;
}

}  // namespace powershape::cli
