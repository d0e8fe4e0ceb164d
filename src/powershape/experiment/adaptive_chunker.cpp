#include "powershape/experiment/adaptive_chunker.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "powershape/experiment/stats.hpp"
#include "powershape/util/error.hpp"

namespace powershape::experiment {
namespace {

constexpr double kMaxStepMs = 7 * 24 * 3600e3;
constexpr double kMaxWatts = 1e5;

}  // namespace

AdaptiveChunker::AdaptiveChunker(ChunkerOptions o) : o_(std::move(o)) {
  if (o_.arms.empty()) throw invalid_input("AdaptiveChunker: no chunk counts");
  for (int a : o_.arms) {
    if (a < 1) throw invalid_input("AdaptiveChunker: chunk counts start at 1");
  }
  std::sort(o_.arms.begin(), o_.arms.end());
  o_.arms.erase(std::unique(o_.arms.begin(), o_.arms.end()), o_.arms.end());
  if (o_.per_rung < 1 || o_.probe_every < 1)
    throw invalid_input("AdaptiveChunker: per_rung and probe_every start at 1");
  best_ = o_.arms.front();
  explore(o_.arms);
}

void AdaptiveChunker::explore(std::vector<int> alive) {
  phase_ = Phase::kExplore;
  alive_ = std::move(alive);
  score_.clear();
  cursor_ = 0;
  rung_ = 0;
  choose_next();
}

void AdaptiveChunker::choose_next() {
  if (phase_ == Phase::kSettled) {
    next_ = best_;
    if (since_probe_ >= o_.probe_every) {  // a neighbour, alternately the one below and above
      auto it = std::find(o_.arms.begin(), o_.arms.end(), best_);
      const auto i = static_cast<std::size_t>(it - o_.arms.begin());
      probe_side_ ^= 1;
      if (probe_side_ == 1 && i > 0) next_ = o_.arms[i - 1];
      if (probe_side_ == 0 && i + 1 < o_.arms.size()) next_ = o_.arms[i + 1];
      if (next_ != best_) since_probe_ = 0;
    }
    return;
  }
  // Round-robin over the counts still in, the one with the fewest samples first; in the first
  // pass the smallest count not yet tried (the pass climbs, see report()).
  next_ = *std::min_element(alive_.begin(), alive_.end(),
                            [&](int a, int b) { return score_[a].size() < score_[b].size(); });
}

void AdaptiveChunker::halve_if_due() {
  const auto need = 1 + static_cast<std::size_t>(o_.per_rung) * rung_;  // cumulative samples
  for (int a : alive_) {
    if (score_[a].size() < need) return;
  }
  auto med = [&](int a) { return median(score_[a]); };
  std::vector<int> by = alive_;
  std::stable_sort(by.begin(), by.end(), [&](int a, int b) { return med(a) < med(b); });
  const double lead = med(by.front());
  std::vector<int> keep;
  for (std::size_t k = 0; k < by.size(); ++k) {
    const bool cut = rung_ == 0 ? med(by[k]) > lead * (1 + o_.cutoff)
                                : k >= std::max<std::size_t>(by.size() / 2, 1);
    if (!cut) keep.push_back(by[k]);
  }
  ++rung_;
  alive_ = keep;
  if (alive_.size() == 1) {
    best_ = alive_.front();
    phase_ = Phase::kSettled;
    reference_ = med(best_);
    cusum_up_ = cusum_down_ = 0;
    recent_.clear();
    probes_.clear();
    since_probe_ = 0;
  }
}

void AdaptiveChunker::report(int chunks, double ms, double joules) {
  // A step of a week, or a joule count a GPU could not draw in it (a 100 kW node), is a unit or
  // a counter gone wrong: believed, it would pick a wrong count, or (negative) empty the search.
  if (std::find(o_.arms.begin(), o_.arms.end(), chunks) == o_.arms.end())
    throw invalid_input("AdaptiveChunker: " + std::to_string(chunks) +
                        " chunks is not one of the counts it chooses from");
  if (!(ms > 0 && ms <= kMaxStepMs))
    throw invalid_input("AdaptiveChunker: a step's time must be above 0 and at most a week (ms)");
  if (!(joules >= 0 && joules <= kMaxWatts * ms * 1e-3))
    throw invalid_input(
        "AdaptiveChunker: a step's energy must be 0 (unknown) or more, at most 100 kW for its "
        "time (J)");
  ++steps_;
  const double s = o_.objective.score(ms, joules);
  if (phase_ == Phase::kExplore) {
    if (std::find(alive_.begin(), alive_.end(), chunks) != alive_.end())
      score_[chunks].push_back(s);
    if (rung_ == 0) {
      // The first pass climbs from the fewest chunks: a count `cutoff` worse than the best so far
      // ends the climb, and the larger counts are not tried (a step's cost is unimodal in the
      // count: more chunks smooth power but add per-chunk work, which grows without bound; on a
      // low-bandwidth device 64 chunks of dW accumulation cost several times a step).
      double lead = s;
      for (const auto& [a, v] : score_) {
        if (!v.empty()) lead = std::min(lead, v.front());
      }
      if (s > lead * (1 + o_.cutoff)) {
        alive_.erase(std::remove_if(alive_.begin(), alive_.end(),
                                    [&](int a) { return a > chunks && score_[a].empty(); }),
                     alive_.end());
      }
    }
    halve_if_due();
    choose_next();
    return;
  }
  ++since_probe_;
  if (chunks != best_) {  // a neighbour's probe: it takes over once better on 3 probes
    auto& p = probes_[chunks];
    p.push_back(s);
    if (p.size() > 3) p.erase(p.begin());
    if (p.size() == 3 && !recent_.empty() && median(p) < median(recent_) * (1 - o_.switch_margin)) {
      best_ = chunks;
      reference_ = median(p);
      cusum_up_ = cusum_down_ = 0;
      recent_.clear();
      probes_.clear();
    }
    choose_next();
    return;
  }
  recent_.push_back(s);
  if (recent_.size() > 9) recent_.erase(recent_.begin());
  // Two-sided CUSUM of the change against the level, which follows slowly (a moving average over
  // ~20 steps): a step in conditions adds up within a few steps, a slow drift (a die warming over
  // minutes) is absorbed, and the neighbours' probes follow it.
  const double d = s / reference_ - 1;
  cusum_up_ = std::max(0.0, cusum_up_ + d - o_.cusum_slack);
  cusum_down_ = std::max(0.0, cusum_down_ - d - o_.cusum_slack);
  reference_ += 0.05 * (s - reference_);
  if (cusum_up_ > o_.cusum_limit || cusum_down_ > o_.cusum_limit) {
    ++restarts_;
    std::vector<int> near;  // the counts within a factor of 4 of the best
    for (int a : o_.arms) {
      if (int64_t{a} * 4 >= best_ && a <= int64_t{best_} * 4) near.push_back(a);  // no overflow
    }
    explore(near);
    return;
  }
  choose_next();
}

}  // namespace powershape::experiment
