#pragma once
// Choosing a configuration (a chunk count) with fewer measurements than a full sweep, without being
// fooled by noise: a model's prediction narrows the candidates, then interleaved, paired rounds
// (the baseline in every one) race them: a candidate goes as soon as its objective is resolved
// worse than the leader's (a paired bootstrap interval above 1), and every two rounds the worse
// half by median goes too (successive halving), until one remains, the rest are within the
// minimum effect of the leader, or the round budget is spent.
#include <cstddef>
#include <string>
#include <vector>

#include "powershape/experiment/engine.hpp"
#include "powershape/sim/profile.hpp"

namespace powershape::experiment {

// What is minimised, per iteration: time, energy, the energy-delay product, or Zeus' cost
// eta x E + (1 - eta) x P_max x T.
struct Objective {
  enum Kind { kTime, kEnergy, kEdp, kCost } kind = kTime;
  double eta = 0.5;    // kCost's weight of energy
  double p_max_w = 0;  // kCost's power (the device's limit)
  double score(double ms, double joules) const;
  std::string describe() const;
};
// "time", "energy", "edp" or "cost:ETA" (ETA in [0, 1]); throws naming --objective.
Objective parse_objective(const std::string& s, double p_max_w);

struct TuneOptions {
  Objective objective;
  double max_slowdown = -1;  // > 0: a candidate slower than the baseline by more is dropped
  double window_s = 2;
  int max_rounds = 8;  // the budget; an exhaustive sweep (run_design) of all candidates this long
  double min_effect = 0.002;
  uint64_t seed = 1;
  // The model's score of each configuration (lower is better), or empty: the `keep` best it
  // predicts, and the baseline, are raced; the rest are not measured.
  std::vector<double> predicted;
  // The model's milliseconds an iteration of each, or empty: what the sweep's cost estimate takes
  // for a configuration never measured.
  std::vector<double> predicted_ms;
  std::size_t keep = 2;
  // How far the model's ratios may be off (a fraction, Profile::chunk_ratio_points / 100): a
  // candidate predicted within it of the best is raced too, whatever `keep` says, since the model
  // cannot tell it from the best.
  double model_error = 0;
  int halve_every = 2;  // rounds between halvings of the candidates left
  // Fresh paired rounds of the choice against the baseline, for its interval (>= 2: a t interval
  // on 2 pairs has 1 degree of freedom and is 12.7 standard errors wide; 0: none, and
  // no interval is claimed).
  int confirm_rounds = 3;
  Design warmup;  // its warm-up fields, its baseline (the unchunked configuration), its on_round
};

struct TuneCandidate {
  std::string name;
  bool raced = true;                     // false: the model left it out
  int rounds = 0;                        // measured in this many
  int dropped_after = -1;                // the round after which it was dropped; -1: not dropped
  std::string why;                       // why it was dropped
  double ms = 0, joules = 0, score = 0;  // medians over its rounds
};

struct TuneResult {
  std::size_t chosen = 0, baseline = 0;
  // The chosen against the baseline, from the confirmation rounds alone (unbiased by the race);
  // a choice no better than the baseline there gives way to it.
  Interval score_ratio, time_ratio, energy_ratio;
  // One candidate left, the rest within the minimum effect of it, or the choice resolved better
  // than the baseline on the confirmation's fresh pairs.
  bool resolved = false;
  int rounds = 0;
  double warmup_s = 0, search_s = 0;  // measurement time spent
  int measurements = 0;
  double exhaustive_s = 0;  // what run_design over every candidate for max_rounds would measure
  int exhaustive_measurements = 0;
  std::vector<TuneCandidate> candidates;
  std::vector<Measurement> all;  // every measurement, warm-up excluded
};

// The backend's configurations are the candidates. Throws std::invalid_argument on bad options.
TuneResult tune(Backend& backend, const TuneOptions& o);

// The model: each plan's score on a simulated device of profile p, after a warm-up, one window
// each (milliseconds of CPU per plan).
// `ms`, when given, gets each plan's milliseconds an iteration.
// The simulated `model` as the race's: its scores and milliseconds for `plans`, and how far its
// ratios may be off. Returns what it will keep, in a line.
std::string use_model(TuneOptions& o, const sim::Profile& model,
                      const std::vector<workload::Plan>& plans);

std::vector<double> predict_scores(const sim::Profile& p, const std::vector<workload::Plan>& plans,
                                   const Objective& objective, double window_s = 1,
                                   std::vector<double>* ms = nullptr);

nlohmann::json to_json(const TuneResult& r);

}  // namespace powershape::experiment
