#pragma once
// advise's sweep: each candidate setting applied in turn (recorded, set, put back) while a command
// runs, in interleaved rounds (SettingsBackend under run_design: compare's design, the settings
// its configurations), and the best within the bound chosen from what was measured. Changes the
// GPU's settings: never run on a shared GPU.
#include <nlohmann/json.hpp>
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

}  // namespace powershape::advise
