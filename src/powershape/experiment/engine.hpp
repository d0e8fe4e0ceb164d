#pragma once
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "powershape/experiment/backend.hpp"
#include "powershape/experiment/stats.hpp"

namespace powershape::experiment {

// The most measurement a design may plan (rounds x configurations x windows and cool-downs, plus
// the warm-up): a day.
inline constexpr double kMaxDesignSeconds = 86400;

struct Design {
  int rounds = 8;
  double window_s = 2;       // each measurement; >= 1 s for 10 energy-counter updates
  std::size_t baseline = 0;  // the configuration ratios are taken against
  uint64_t seed = 1;         // shuffles the order within each round
  // Instead of shuffled, each round's order is the one before moved on by one (round r starts at
  // configuration r mod n): over n rounds each configuration runs in each place once, and two
  // alternate which goes first. For a few rounds of a slow device that drifts (heat, boost), where
  // a shuffle could leave one configuration always first.
  bool rotate = false;
  // Warm-up: the baseline runs in windows of warmup_window_s (or five iterations, if longer) until
  // the mean SM clock and power of the last `settle_windows` agree within settle_tolerance (or
  // their mean with the mean of the windows before them: a controller hunting around its limit
  // wanders, yet no longer drifts), or warmup_max_s has passed.
  double warmup_window_s = 0.5, warmup_max_s = 60, settle_tolerance = 0.01;
  double warmup_min_s = 0;  // however soon it settles (heat_warmup: a slow heat sink's)
  int settle_windows = 3;
  double cooldown_c = 0;  // > 0: idle before each measurement until this cool (at most 60 s)
  // A ratio whose interval excludes 1 but which lies within min_effect of it is called "within"
  // that, not faster or slower: a deterministic simulator resolves differences nobody would act on.
  double min_effect = 0.002;
  // Called after each round with its number (from 1) and the measurement seconds so far.
  std::function<void(int round, int rounds, double seconds)> on_round;
  // Where a measurement fails and this says the run was interrupted (Ctrl-C), the rounds that
  // finished are the result (Result::rounds_done) instead of the error.
  std::function<bool()> interrupted;
};

struct ConfigResult {
  std::string name;
  double ms_per_iteration = 0, j_per_iteration = 0, avg_power_w = 0, sm_clock_mhz = 0,
         power_capped = 0, thermal_throttled = 0, peak_temp_c = 0, compute_tflops = 0,
         extra_gib = 0;               // medians
  Interval time_ratio, energy_ratio;  // against the baseline
  // "faster"/"slower", "less energy"/"more energy", "within 0.2%" (a difference under min_effect),
  // "no difference" (the interval holds 1), "baseline".
  std::string time_verdict, energy_verdict;
};

struct Result {
  std::string backend;
  bool simulated = false;
  nlohmann::json device;
  double warmup_s = 0;
  bool settled = false;
  std::vector<Measurement> warmup, measurements;
  std::vector<ConfigResult> configs;
  std::size_t baseline = 0;
  // The lowest median among the configurations called faster (less energy); else the baseline.
  std::size_t best_time = 0, best_energy = 0;
  // The rounds the configurations were summed up over: all of them, or, when interrupted, those
  // that finished (under two: no configs; the measurements made are kept all the same).
  int rounds_done = 0;
  bool interrupted = false;
};

// Runs every configuration once per round, in an order shuffled anew each round, after a
// warm-up detected from telemetry. Throws std::invalid_argument on a design it cannot run.
Result run_design(Backend& backend, const Design& design);

// Where the device's heat settles slower than a window (its thermal time constant, where known,
// exceeds window_s), the warm-up `design` gets at least four time constants (within its
// maximum, raised to hold them, up to 10 minutes) and the note says so: a thermal effect (a
// slowdown that trips only once the heat sink is warm) would otherwise be hidden, the windows
// then alternating configurations on one die whose heat is the mix's (or, where the backend runs
// each configuration apart, each on its own die). "" where it does not.
std::string heat_warmup(const Backend& backend, double window_s, Design& design);
// The backend's one configuration run for `seconds` as the GPU is found, a second of idle on each
// side, and recorded: what advise predicts from as from a trace.
trace::Trace record_as_found(Backend& backend, double seconds);
// The warm-up run_design does: the baseline in windows until the power controller has settled
// (design.warmup_*), into r.warmup, r.warmup_s and r.settled; where the backend runs each
// configuration apart, each of them after it, on its own.
void warm_up(Backend& backend, const Design& design, Result& r);
// Idles, then runs configuration i: the ms from the load step until the reported SM clock first
// falls 5% under its maximum (the device's, else the highest reported before the step); empty
// if it never does.
std::optional<double> step_response_ms(Backend& backend, std::size_t i);
// An interval as every JSON file writes one: {"lo", "ratio", "hi"}.
nlohmann::json to_json(const Interval& i);
nlohmann::json to_json(const Result& r);

}  // namespace powershape::experiment
