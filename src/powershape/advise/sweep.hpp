#pragma once
// advise's sweep: each candidate setting applied in turn (recorded, set, put back) while a command
// runs, in interleaved rounds (SettingsBackend under run_design: compare's design, the settings
// its configurations), and the best within the bound chosen from what was measured. Changes the
// GPU's settings: never run on a shared GPU.
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "powershape/advise/settings_backend.hpp"
#include "powershape/experiment/engine.hpp"

namespace powershape::advise {

// What a GPU lets one sweep, from what NVML reports of it: clock caps in 15 MHz steps (as
// NVIDIA's data-centre parts take them) from kLowestCapShare of its maximum, and its power limits.
// Throws unsupported where its maximum SM clock cannot be read.
SettingRange sweep_range(const telemetry::DeviceInfo& d);

struct Sweep {
  experiment::Result experiment;  // each run: its setting, round, time and telemetry
  std::vector<Outcome> outcomes;  // a setting each, as found first; empty when interrupted
  std::size_t chosen = 0;
};

// design: its rounds, on_round and interrupted are the caller's; a run lasts what the command
// takes and the first run as found is the warm-up.
Sweep sweep(SettingsBackend& swept, experiment::Design design,
            const experiment::Objective& objective, double max_slowdown);

nlohmann::json to_json(const Sweep& s, const experiment::Objective& objective);

// `advise --sweep -- CMD`: the command's runs (its telemetry from `source`) under each candidate
// of `knobs` on NVML's GPU `gpu` (`points` a knob, from sweep_range), in `rounds` rounds.
struct SweepRequest {
  std::vector<std::string> command;
  std::string source = "nvml";
  int gpu = 0, points = 4, rounds = 2;
  std::vector<Knob> knobs;
  experiment::Objective objective;  // its p_max_w: the GPU's default limit
  double max_slowdown = -1;
  // Told, before the first run, what is swept on which GPU: "N settings x R rounds of 'CMD' on
  // GPU"; then each round, as the engine's on_round; asked between runs whether to stop.
  std::function<void(const std::string&)> on_start;
  std::function<void(int, int, double)> on_round;
  std::function<bool()> interrupted;
};
// Throws naming "gpu" where NVML has no such GPU. The objective used comes back in `objective`.
Sweep sweep_command(const SweepRequest& q, experiment::Objective* objective);

}  // namespace powershape::advise
