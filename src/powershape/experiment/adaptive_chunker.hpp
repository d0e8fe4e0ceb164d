#pragma once
// Online chunk-count selection inside a training loop: each step reports what it took with the
// count it used, and asks for the count of the next one.
//
// Successive halving with change detection, not Thompson sampling: a step's time on a GPU under
// its power controller moves with the controller's state, so the noise is neither stationary nor
// independent between arms, which a sampler's posterior assumes; halving needs only medians of a
// few interleaved samples, and a CUSUM on the chosen count's own objective says when conditions
// (heat, a power limit, another process) have moved, which then restarts halving among its
// neighbours. Exploration is kept cheap: after one step each, a count more than `cutoff` worse
// than the best seen is dropped at once (on an H200, 64 chunks can take twice as long), and once
// settled the neighbours (half and double) are probed once every `probe_every` steps, so that a
// slow drift toward another count is followed without a restart.
#include <map>
#include <string>
#include <vector>

#include "powershape/experiment/tune.hpp"

namespace powershape::experiment {

struct ChunkerOptions {
  std::vector<int> arms = {1, 2, 4, 8, 16, 32, 64};
  Objective objective;
  int per_rung = 2;              // samples of each count between halvings (after the first)
  double cutoff = 0.10;          // dropped after one sample when this much worse than the best
  int probe_every = 25;          // settled: a neighbour is probed every this many steps
  double switch_margin = 0.005;  // a neighbour better by this much (median of 3 probes) wins
  double cusum_slack = 0.01, cusum_limit = 0.10;  // relative; drift above the slack adds up
};

class AdaptiveChunker {
 public:
  // Throws std::invalid_argument on no arms or a count under 1.
  explicit AdaptiveChunker(ChunkerOptions o);
  // The chunk count for the next step.
  int next() const { return next_; }
  // What the step that used `chunks` (one of the arms) took: ms above 0, at most a week; joules
  // 0 (unknown) or more, at most 100 kW for that time. Throws invalid_input otherwise, changing
  // nothing.
  void report(int chunks, double ms, double joules);
  int best() const { return best_; }
  bool settled() const { return phase_ == Phase::kSettled; }
  int restarts() const { return restarts_; }  // how often drift restarted the search
  int steps() const { return steps_; }

 private:
  enum class Phase { kExplore, kSettled };
  void explore(std::vector<int> alive);
  void choose_next();
  void halve_if_due();

  ChunkerOptions o_;
  Phase phase_ = Phase::kExplore;
  std::vector<int> alive_;                    // exploring: the counts still in
  std::map<int, std::vector<double>> score_;  // exploring: this search's scores per count
  std::size_t cursor_ = 0;                    // exploring: round-robin position
  int rung_ = 0;
  int best_ = 0, next_ = 0, steps_ = 0, restarts_ = 0;
  double reference_ = 0, cusum_up_ = 0, cusum_down_ = 0;  // settled: the best's level and drift
  std::map<int, std::vector<double>> probes_;             // settled: neighbours' recent scores
  std::vector<double> recent_;                            // settled: the best's recent scores
  int since_probe_ = 0, probe_side_ = 0;
};

}  // namespace powershape::experiment
