#pragma once
// A user's job, diagnosed and improved in one go (`powershape optimize -- CMD`): the job run as
// found under telemetry (its steps, where it marks them, as the iterations), what throttling costs
// it and which phases carry its energy, then the knobs it may turn: the chunk count through the job
// (POWERSHAPE_CHUNKS in its environment, or {chunks} in the command) raced as `tune` races, and a
// power limit or clock cap predicted from the as-found trace as `advise --trace` predicts (set only
// where the caller gives a target to apply it to, and then only while a measured run lasts). One
// recommendation, with its interval and what it saves per step, per hour and per run; never longer
// than the budget, and what there was no time for is said.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "powershape/advise/advice.hpp"
#include "powershape/advise/apply.hpp"
#include "powershape/advise/grid_check.hpp"
#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/phases.hpp"
#include "powershape/experiment/backend.hpp"
#include "powershape/experiment/tune.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::optimize {

inline constexpr const char* kChunksEnv = "POWERSHAPE_CHUNKS";
// A chunk count in this environment's kChunksEnv that the job's as-found runs would get and the
// op would refuse: refused now, naming it, not after a budget of runs (run checks it too).
void check_environment();

struct Options {
  std::vector<std::string> command;  // argv; {chunks} where a chunk count goes
  std::string source = "nvml";       // what open_source opens (nvml, fake:TRACE.csv, hwmon)
  std::vector<int> chunks = {1, 2, 4, 8, 16};  // counts raced beside the job as found
  std::string objective = "time";              // time, energy, edp or cost:ETA
  double max_slowdown = 0.05;                  // a fraction; -1: any
  double budget_s = 600;
  double tokens_per_step = 0;  // > 0: tokens/s shown
  std::string region;          // the steps' region; empty: the first the job marks
  std::string profile;         // the V/f curve of predicted settings; empty: matched by name
  uint64_t seed = 1;
  std::function<void(const std::string&)> progress;  // a line as each stage starts
  // Where a predicted setting may be applied to measure it (paired runs of the job as found, with
  // and without it, each put back at once: advise::Applied); null: predicted only.
  std::function<std::unique_ptr<advise::SettingsTarget>()> apply_target;
  // The grid as a constraint: every configuration's runs held to the spec (grid_check.hpp), the
  // job's GPU standing for `grid_gpus` in step; the recommendation is the best objective among
  // the configurations within it, and none where none is.
  std::optional<analysis::GridSpec> grid;
  double grid_gpus = 1;
  // Power floors raced as configurations: the job as found run under `smooth_exe smooth --floor
  // F` (with --gap floor_gap, --ramp floor_ramp_w_per_s where given). Needs a GPU.
  std::vector<std::string> floors;
  std::string floor_gap, smooth_exe;
  double floor_ramp_w_per_s = 0;
};

struct Diagnosis {
  experiment::Measurement as_found;  // per step where the job marks steps, else per run
  bool by_steps = false;
  double run_s = 0;
  double max_clock_mhz = 0;  // the GPU's, 0 when the source does not say
  // Shares of the steps' span where the job marks steps (start-up left out), else of the run.
  double power_capped = 0;
  double thermal = 0;
  double reduced_clock = 0;  // share of the busy time below 97% of the max clock
  double dipped_steps = -1;  // share of steps whose clock fell 3% under the median step's
  double throttle_cost = 0;  // share of the run's time the clock-bound work lost to throttling
  std::vector<analysis::PhaseShare> shares;
  bool throttled() const { return power_capped >= 0.05 || thermal >= 0.05; }
};

struct Recommendation {
  enum Kind { kNone, kChunks, kSetting, kFloor } kind = kNone;
  std::string what;  // "POWERSHAPE_CHUNKS=8", "power limit 405 W", "floor 60%"; empty for kNone
  bool measured = false;  // false: predicted from the trace
  experiment::Interval time_ratio, energy_ratio, score_ratio;
  double ms_saved_per_step = 0, j_saved_per_step = 0;
  double wh_saved_per_hour = 0;  // running the job for an hour
  double wh_saved_per_run = 0;   // one run of the command as measured
};

struct Result {
  std::string device;  // what the source reports
  experiment::Objective objective;
  Diagnosis diagnosis;
  std::vector<std::string> candidates;  // the raced configurations' names, as found first
  std::optional<experiment::TuneResult> race;
  std::optional<advise::TraceAdvice> advice;
  std::vector<std::string> notes;  // what was not tried, and why
  // Why a run of the job failed after the as-found run (the race or the setting's runs stopped
  // there); empty when none did. What was measured before it is kept.
  std::string failure;
  Recommendation recommendation;
  // With a grid spec: the job as found, each raced configuration, and the predicted setting.
  std::vector<advise::GridCheck> grid;
  double elapsed_s = 0;
  trace::Trace trace;  // everything recorded, each run a region
};

// The commands raced: the job as found (first; with {chunks} in it, the first count instead),
// then one a chunk count. Throws invalid_input on a bad list.
std::vector<std::vector<std::string>> chunk_commands(const std::vector<std::string>& command,
                                                     const std::vector<int>& chunks,
                                                     std::vector<std::string>* names = nullptr);

// The job as found (`command`) under each floor: `smooth_exe smooth --floor F ... -- command`.
// Throws invalid_input on a floor that is not W or N%.
std::vector<std::vector<std::string>> floor_commands(const std::vector<std::string>& command,
                                                     const Options& o,
                                                     std::vector<std::string>* names = nullptr);

// Throws invalid_input (bad options, a job that fails as found) or unsupported (no source).
Result run(const Options& o);

nlohmann::json to_json(const Result& r);

}  // namespace powershape::optimize
