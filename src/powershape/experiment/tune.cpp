#include "powershape/experiment/tune.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

#include "powershape/experiment/sim_backend.hpp"
#include "powershape/experiment/stats.hpp"
#include "powershape/util/error.hpp"

namespace powershape::experiment {

double Objective::score(double ms, double joules) const {
  switch (kind) {
    case kTime:
      return ms;
    case kEnergy:
      return joules;
    case kEdp:
      return joules * ms * 1e-3;
    case kCost:
      return eta * joules + (1 - eta) * p_max_w * ms * 1e-3;
  }
  return ms;
}

std::string Objective::describe() const {
  switch (kind) {
    case kTime:
      return "time";
    case kEnergy:
      return "energy";
    case kEdp:
      return "energy-delay product";
    case kCost: {
      std::ostringstream s;
      s << "cost " << eta << " E + " << 1 - eta << " x " << p_max_w << " W x T";
      return s.str();
    }
  }
  return "time";
}

Objective parse_objective(const std::string& s, double p_max_w) {
  Objective o;
  o.p_max_w = p_max_w;
  if (s == "time") return o;
  if (s == "energy") {
    o.kind = Objective::kEnergy;
    return o;
  }
  if (s == "edp") {
    o.kind = Objective::kEdp;
    return o;
  }
  if (s.rfind("cost:", 0) == 0) {
    o.kind = Objective::kCost;
    std::size_t used = 0;
    try {
      o.eta = std::stod(s.substr(5), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size() - 5 || !(o.eta >= 0 && o.eta <= 1)) {
      throw invalid_input("objective", "cost:ETA needs ETA in [0, 1], found '" + s + "'");
    }
    if (!(p_max_w > 0)) throw invalid_input("objective", "cost needs the device's power limit");
    return o;
  }
  throw invalid_input("objective", "expected time, energy, edp or cost:ETA, found '" + s + "'");
}

namespace {

// Per configuration, its measurement in each round (absent where it was not measured).
using Rounds = std::vector<std::map<int, Measurement>>;

// Paired values of a and b over the rounds both were measured in.
std::pair<std::vector<double>, std::vector<double>> pairs(const Rounds& r, std::size_t a,
                                                          std::size_t b, const auto& get) {
  std::vector<double> x, y;
  for (const auto& [round, m] : r[a]) {
    auto it = r[b].find(round);
    if (it == r[b].end()) continue;
    x.push_back(get(m));
    y.push_back(get(it->second));
  }
  return {x, y};
}

double median_of(const std::map<int, Measurement>& rounds, const auto& get) {
  std::vector<double> v;
  for (const auto& [round, m] : rounds) v.push_back(get(m));
  return v.empty() ? 0 : median(v);
}

}  // namespace

namespace {

void check(const Backend& backend, const TuneOptions& o) {
  const std::size_t n = backend.config_count();
  if (n == 0) throw invalid_input("tune: no candidates");
  if (o.warmup.baseline >= n) throw invalid_input("tune: the baseline is not a candidate");
  if (o.max_rounds < 2 || !(o.window_s > 0))
    throw invalid_input("tune: two rounds or more, and a positive window");
  if (!o.predicted.empty() && o.predicted.size() != n)
    throw invalid_input("tune: one prediction per candidate");
  const double planned = static_cast<double>(o.max_rounds) * static_cast<double>(n) * o.window_s;
  if (planned + o.warmup.warmup_max_s > kMaxDesignSeconds)
    throw invalid_input("tune: the budget plans more than a day of measurement");
}

// The model's cut: its `keep` best, those it cannot tell from its best, and the baseline race;
// without a model, all of them.
std::vector<bool> prune(const TuneOptions& o, std::size_t base, TuneResult& r) {
  const std::size_t n = r.candidates.size();
  std::vector<bool> alive(n, true);
  if (o.predicted.empty()) return alive;
  std::vector<std::size_t> by(n);
  std::iota(by.begin(), by.end(), 0);
  std::stable_sort(by.begin(), by.end(),
                   [&](std::size_t a, std::size_t b) { return o.predicted[a] < o.predicted[b]; });
  const double near = o.predicted[by.front()] * (1 + o.model_error);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t c = by[k];
    alive[c] = k < o.keep || c == base || o.predicted[c] <= near;
    r.candidates[c].raced = alive[c];
    if (!alive[c]) r.candidates[c].why = "the model predicts it worse";
  }
  return alive;
}

// One candidate's measurement, recorded as the search's.
void measure(Backend& backend, const TuneOptions& o, std::size_t c, int round, Rounds& into,
             TuneResult& r) {
  Measurement m = backend.measure(c, o.window_s);
  m.round = round;
  r.search_s += m.seconds;
  ++r.measurements;
  into[c][round] = m;
  r.all.push_back(m);
}

void drop(TuneResult& r, std::vector<bool>& alive, std::size_t c, int round, std::string why) {
  alive[c] = false;
  r.candidates[c].dropped_after = round;
  r.candidates[c].why = std::move(why);
}

// The race: interleaved shuffled rounds (the baseline in every one, so that every ratio is paired
// with it); after each from the second, a candidate resolved worse than the leader goes (or slower
// than the baseline by more than max_slowdown), and every halve_every rounds the worse half by
// median goes too (successive halving). Ends with one left, the rest within the minimum effect of
// the leader, one challenger left beside the baseline (returned, for the confirmation to decide),
// or the budget spent. Returns the leader.
std::size_t race(Backend& backend, const TuneOptions& o, std::vector<bool>& alive, Rounds& rounds,
                 std::mt19937_64& rng, TuneResult& r) {
  const std::size_t n = alive.size(), base = r.baseline;
  const auto score = [&](const Measurement& m) {
    return o.objective.score(m.ms_per_iteration, m.j_per_iteration());
  };
  const auto ms = [](const Measurement& m) { return m.ms_per_iteration; };
  // One challenger left beside the baseline (by a drop or by halving): the confirmation's fresh
  // pairs of the two decide (more race rounds of the same pair would only repeat them, biased).
  // n where there is none.
  const auto one_challenger = [&]() -> std::size_t {
    if (o.confirm_rounds < 2 || !alive[base] || std::count(alive.begin(), alive.end(), true) != 2)
      return n;
    for (std::size_t c = 0; c < n; ++c) {
      if (alive[c] && c != base) return c;
    }
    return n;
  };
  std::size_t leader = base;
  for (int round = 0; round < o.max_rounds; ++round) {
    std::vector<std::size_t> order;
    for (std::size_t c = 0; c < n; ++c) {
      if (alive[c] || c == base) order.push_back(c);
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t c : order) measure(backend, o, c, round, rounds, r);
    r.rounds = round + 1;
    if (o.warmup.on_round) o.warmup.on_round(round + 1, o.max_rounds, r.search_s);
    leader = base;
    double best = INFINITY;
    for (std::size_t c = 0; c < n; ++c) {
      if (!alive[c]) continue;
      const double s = median_of(rounds[c], score);
      if (s < best) best = s, leader = c;
    }
    if (round == 0) continue;  // a paired interval needs two rounds
    bool all_close = true;
    for (std::size_t c = 0; c < n; ++c) {
      if (!alive[c] || c == leader) continue;
      auto [a, b] = pairs(rounds, c, leader, score);
      const Interval worse = ratio_interval(a, b, o.seed + c);
      if (worse.lo > 1) {
        drop(r, alive, c, round, "resolved worse than " + r.candidates[leader].name);
        continue;
      }
      if (o.max_slowdown > 0 && c != base) {
        auto [t, tb] = pairs(rounds, c, base, ms);
        if (ratio_interval(t, tb, o.seed + 500 + c).lo > 1 + o.max_slowdown) {
          drop(r, alive, c, round, "slower than the baseline by more than the slowdown allowed");
          continue;
        }
      }
      all_close = all_close && worse.lo >= 1 - o.min_effect && worse.hi <= 1 + o.min_effect;
    }
    if (std::count(alive.begin(), alive.end(), true) == 1 || all_close) {
      r.resolved = true;
      return leader;
    }
    if (const auto c = one_challenger(); c != n) return c;
    if ((round + 1) % o.halve_every == 0) {
      std::vector<std::size_t> by;
      for (std::size_t c = 0; c < n; ++c) {
        if (alive[c]) by.push_back(c);
      }
      std::stable_sort(by.begin(), by.end(), [&](std::size_t a, std::size_t b) {
        return median_of(rounds[a], score) < median_of(rounds[b], score);
      });
      for (std::size_t k = std::max<std::size_t>(by.size() / 2, 1); k < by.size(); ++k)
        drop(r, alive, by[k], round,
             "in the worse half after " + std::to_string(round + 1) + " rounds");
      // One left by halving is resolved only if its interval says so (reported by confirm).
      if (std::count(alive.begin(), alive.end(), true) == 1) return leader;
      if (const auto c = one_challenger(); c != n) return c;
    }
  }
  return leader;
}

// The race picked the leader because it looked best: its interval on the race's own rounds would
// be biased (the winner's curse). Fresh paired rounds of it against the baseline give the
// interval reported.
void confirm(Backend& backend, const TuneOptions& o, std::mt19937_64& rng, TuneResult& r) {
  const std::size_t base = r.baseline;
  const auto score = [&](const Measurement& m) {
    return o.objective.score(m.ms_per_iteration, m.j_per_iteration());
  };
  const auto ms = [](const Measurement& m) { return m.ms_per_iteration; };
  const auto joules = [](const Measurement& m) { return m.j_per_iteration(); };
  if (r.chosen == base) {
    r.score_ratio = r.time_ratio = r.energy_ratio = {1, 1, 1};
    return;
  }
  if (o.confirm_rounds < 2) {
    r.score_ratio = r.time_ratio = r.energy_ratio = {0, 1, INFINITY};  // not confirmed
    return;
  }
  Rounds fresh(r.candidates.size());
  for (int k = 0; k < o.confirm_rounds; ++k) {
    std::vector<std::size_t> pair = {r.chosen, base};
    std::shuffle(pair.begin(), pair.end(), rng);
    for (std::size_t c : pair) measure(backend, o, c, o.max_rounds + k, fresh, r);
  }
  auto [s, sb] = pairs(fresh, r.chosen, base, score);
  r.score_ratio = ratio_interval(s, sb, o.seed + 7);
  if (r.score_ratio.mid >= 1) {  // no better than the baseline where it was not chosen from
    char why[96];
    std::snprintf(why, sizeof why, "no better than the baseline on fresh paired rounds (%.4f)",
                  r.score_ratio.mid);
    r.candidates[r.chosen].why = why;
    r.chosen = base;
    r.score_ratio = r.time_ratio = r.energy_ratio = {1, 1, 1};
    return;
  }
  r.resolved = r.resolved || r.score_ratio.hi < 1;  // resolved better than the baseline
  auto [t, tb] = pairs(fresh, r.chosen, base, ms);
  r.time_ratio = ratio_interval(t, tb, o.seed + 8);
  auto [e, eb] = pairs(fresh, r.chosen, base, joules);
  r.energy_ratio = ratio_interval(e, eb, o.seed + 9);
}

// What an exhaustive sweep of every candidate for max_rounds would have measured. A window lasts
// whole iterations, so at least window_s, longer for a count whose iterations are long: each
// count's windows as long as ours of it were; one never measured (the model pruned it) as long as
// whole iterations of the model's length make, else as our longest.
void estimate_sweep(const TuneOptions& o, TuneResult& r) {
  const std::size_t n = r.candidates.size();
  r.exhaustive_measurements = o.max_rounds * static_cast<int>(n);
  std::vector<double> secs(n, 0);
  std::vector<int> count(n, 0);
  for (const auto& m : r.all) {
    secs[m.config] += m.seconds;
    ++count[m.config];
  }
  double longest_s = o.window_s;
  for (std::size_t c = 0; c < n; ++c) {
    if (count[c] > 0) longest_s = std::max(longest_s, secs[c] / count[c]);
  }
  r.exhaustive_s = 0;
  for (std::size_t c = 0; c < n; ++c) {
    double w = longest_s;
    if (count[c] > 0) {
      w = secs[c] / count[c];
    } else if (o.predicted_ms.size() == n && o.predicted_ms[c] > 0) {
      const double it_s = o.predicted_ms[c] * 1e-3;
      w = std::ceil(o.window_s / it_s) * it_s;
    }
    r.exhaustive_s += o.max_rounds * w;
  }
}

}  // namespace

TuneResult tune(Backend& backend, const TuneOptions& o) {
  check(backend, o);
  const std::size_t n = backend.config_count();
  TuneResult r;
  r.baseline = o.warmup.baseline;
  r.candidates.resize(n);
  for (std::size_t c = 0; c < n; ++c) r.candidates[c].name = backend.config_name(c);
  std::vector<bool> alive = prune(o, r.baseline, r);
  Result warm;
  warm_up(backend, o.warmup, warm);
  r.warmup_s = warm.warmup_s;
  Rounds rounds(n);
  std::mt19937_64 rng(o.seed);
  r.chosen = race(backend, o, alive, rounds, rng, r);
  confirm(backend, o, rng, r);
  const auto score = [&](const Measurement& m) {
    return o.objective.score(m.ms_per_iteration, m.j_per_iteration());
  };
  for (std::size_t c = 0; c < n; ++c) {
    auto& x = r.candidates[c];
    x.rounds = static_cast<int>(rounds[c].size());
    x.ms = median_of(rounds[c], [](const Measurement& m) { return m.ms_per_iteration; });
    x.joules = median_of(rounds[c], [](const Measurement& m) { return m.j_per_iteration(); });
    x.score = median_of(rounds[c], score);
  }
  estimate_sweep(o, r);
  return r;
}

std::vector<double> predict_scores(const sim::Profile& p, const std::vector<workload::Plan>& plans,
                                   const Objective& objective, double window_s,
                                   std::vector<double>* ms) {
  SimBackend model(p, {});
  model.set_configs(plans);
  Result warm;
  warm_up(model, {}, warm);
  std::vector<double> out;
  for (std::size_t c = 0; c < plans.size(); ++c) {
    const Measurement m = model.measure(c, window_s);
    out.push_back(objective.score(m.ms_per_iteration, m.j_per_iteration()));
    if (ms != nullptr) ms->push_back(m.ms_per_iteration);
  }
  return out;
}

nlohmann::json to_json(const TuneResult& r) {
  nlohmann::json c = nlohmann::json::array();
  for (const auto& x : r.candidates) {
    c.push_back({{"name", x.name},
                 {"raced", x.raced},
                 {"rounds", x.rounds},
                 {"dropped_after", x.dropped_after},
                 {"why", x.why},
                 {"ms", x.ms},
                 {"joules", x.joules},
                 {"score", x.score}});
  }
  nlohmann::json all = nlohmann::json::array();
  for (const auto& m : r.all) all.push_back(to_json(m));
  return {{"chosen", r.chosen},
          {"baseline", r.baseline},
          {"score_ratio", to_json(r.score_ratio)},
          {"time_ratio", to_json(r.time_ratio)},
          {"energy_ratio", to_json(r.energy_ratio)},
          {"resolved", r.resolved},
          {"rounds", r.rounds},
          {"warmup_s", r.warmup_s},
          {"search_s", r.search_s},
          {"measurements", r.measurements},
          {"exhaustive_s", r.exhaustive_s},
          {"exhaustive_measurements", r.exhaustive_measurements},
          {"candidates", c},
          {"measurements_all", all}};
}

std::string use_model(TuneOptions& o, const sim::Profile& model,
                      const std::vector<workload::Plan>& plans) {
  o.predicted = predict_scores(model, plans, o.objective, 1, &o.predicted_ms);
  o.model_error = model.chunk_ratio_points / 100;
  std::string line = "model: the simulated " + model.name + " keeps the " + std::to_string(o.keep) +
                     " best of " + std::to_string(plans.size()) + " chunk counts";
  if (model.chunk_ratio_points > 0) {
    char within[128];
    std::snprintf(within, sizeof within,
                  ", those it predicts within %g%% of its best (what its chunk ratios are worth)",
                  model.chunk_ratio_points);
    line += within;
  }
  return line + ", and the baseline";
}

}  // namespace powershape::experiment
