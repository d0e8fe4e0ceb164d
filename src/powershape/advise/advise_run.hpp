#pragma once
// advise's one call: a recorded trace, a workload run on the GPU as found, or a workload on a
// simulated device, each setting predicted and the best within the bound chosen; then its printer.
// (The measured ways, --sweep and --apply, are sweep.hpp and hold.hpp.)
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "powershape/advise/advice.hpp"
#include "powershape/analysis/grid_spec.hpp"
#include "powershape/sim/profile.hpp"
#include "powershape/workload/kind.hpp"

namespace powershape::advise {

struct AdviseRequest {
  std::string trace;  // a recorded trace (monitor's CSV); empty: the workload below
  workload::WorkloadArgs workload;
  std::string device = "sim:h200";  // for the workload: gpu (run as found), or sim:PROFILE
  double gpu_seconds = 30;          // how long the workload runs as found on the GPU
  std::string power_mode;           // the simulated profile's power mode
  std::vector<Knob> knobs;          // what may change; empty: each way's default
  std::string objective = "energy";
  double max_slowdown = 0.1;  // a fraction; -1: any
  int points = 8;             // coarse values a knob, simulated
  SimAdviseOptions sim;
  // A trace's (or the GPU run's) GPU, its V/f profile, the classified window, and a grid spec the
  // choice must be within (nullptr: none; outlives the call) for grid_gpus GPUs in step.
  int gpu = 0;
  std::string profile;
  double window_s = 1;
  const analysis::GridSpec* grid = nullptr;
  double grid_gpus = 1;
  std::function<void(const std::string&)> on_start;  // before the workload runs on the GPU
};

struct AdviseRun {
  std::string source;  // the trace's path, what ran on the GPU, or sim:PROFILE
  int gpu = 0;
  double max_slowdown = -1;
  std::optional<TraceAdvice> from_trace;  // from a trace or the GPU's run
  std::optional<SimAdvice> simulated;     // else on the simulated device below
  std::optional<sim::Profile> profile;
  std::string workload;  // the simulated workload's name
  std::string measured;  // what a GPU of the profile measured for the same question, if anything
  const std::vector<Outcome>& outcomes() const;
  std::size_t chosen() const;
  const experiment::Objective& objective() const;
};

// Throws invalid_input naming the option at fault (a grid spec without a recording, two chunk
// counts, a device that is neither gpu nor sim:PROFILE).
AdviseRun advise(const AdviseRequest& q);
// The source, the objective and bound, every outcome and the recommendation.
nlohmann::json to_json(const AdviseRun& r);
// What was predicted, the choice and the outcomes: every one, or the choice and the GPU as found
// and how many more (`more`: how to see them). From a trace, `unvalidated` (how to measure the
// choice) follows.
void print_advise_run(std::FILE* out, const AdviseRun& r, bool every, const std::string& more,
                      const std::string& unvalidated);

}  // namespace powershape::advise
