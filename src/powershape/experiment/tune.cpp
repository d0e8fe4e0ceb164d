#include "powershape/experiment/tune.hpp"

#include <algorithm>
#include <cmath>
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

TuneResult tune(Backend& backend, const TuneOptions& o) {
  const std::size_t n = backend.config_count();
  const std::size_t base = o.warmup.baseline;
  if (n == 0) throw invalid_input("tune: no candidates");
  if (base >= n) throw invalid_input("tune: the baseline is not a candidate");
  if (o.max_rounds < 2 || !(o.window_s > 0))
    throw invalid_input("tune: two rounds or more, and a positive window");
  if (!o.predicted.empty() && o.predicted.size() != n)
    throw invalid_input("tune: one prediction per candidate");
  const double planned = static_cast<double>(o.max_rounds) * static_cast<double>(n) * o.window_s;
  if (planned + o.warmup.warmup_max_s > kMaxDesignSeconds)
    throw invalid_input("tune: the budget plans more than a day of measurement");

  TuneResult r;
  r.baseline = base;
  r.candidates.resize(n);
  for (std::size_t c = 0; c < n; ++c) r.candidates[c].name = backend.config_name(c);
  std::vector<bool> alive(n, true);
  if (!o.predicted.empty()) {  // the model's best `keep`, those within its error, the baseline
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
  }
  Result warm;
  warm_up(backend, o.warmup, warm);
  r.warmup_s = warm.warmup_s;

  const auto score = [&](const Measurement& m) {
    return o.objective.score(m.ms_per_iteration, m.j_per_iteration());
  };
  const auto ms = [](const Measurement& m) { return m.ms_per_iteration; };
  const auto joules = [](const Measurement& m) { return m.j_per_iteration(); };
  Rounds rounds(n);
  std::mt19937_64 rng(o.seed);
  std::size_t leader = base;
  for (int round = 0; round < o.max_rounds; ++round) {
    // The baseline is measured every round, alive or not: every ratio is paired with it.
    std::vector<std::size_t> order;
    for (std::size_t c = 0; c < n; ++c) {
      if (alive[c] || c == base) order.push_back(c);
    }
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t c : order) {
      Measurement m = backend.measure(c, o.window_s);
      m.round = round;
      r.search_s += m.seconds;
      ++r.measurements;
      rounds[c][round] = m;
      r.all.push_back(m);
    }
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
        alive[c] = false;
        r.candidates[c].dropped_after = round;
        r.candidates[c].why = "resolved worse than " + r.candidates[leader].name;
        continue;
      }
      if (o.max_slowdown > 0 && c != base) {
        auto [t, tb] = pairs(rounds, c, base, ms);
        if (ratio_interval(t, tb, o.seed + 500 + c).lo > 1 + o.max_slowdown) {
          alive[c] = false;
          r.candidates[c].dropped_after = round;
          r.candidates[c].why = "slower than the baseline by more than --max-slowdown";
          continue;
        }
      }
      all_close = all_close && worse.lo >= 1 - o.min_effect && worse.hi <= 1 + o.min_effect;
    }
    auto left = std::count(alive.begin(), alive.end(), true);
    if (left == 1 || all_close) {
      r.resolved = true;
      break;
    }
    // Successive halving: every `halve_every` rounds the worse half by median goes, resolved or
    // not, so that the budget is spent on the few that are close.
    if ((round + 1) % o.halve_every == 0) {
      std::vector<std::size_t> by;
      for (std::size_t c = 0; c < n; ++c) {
        if (alive[c]) by.push_back(c);
      }
      std::stable_sort(by.begin(), by.end(), [&](std::size_t a, std::size_t b) {
        return median_of(rounds[a], score) < median_of(rounds[b], score);
      });
      for (std::size_t k = std::max<std::size_t>(by.size() / 2, 1); k < by.size(); ++k) {
        alive[by[k]] = false;
        r.candidates[by[k]].dropped_after = round;
        r.candidates[by[k]].why =
            "in the worse half after " + std::to_string(round + 1) + " rounds";
      }
      left = std::count(alive.begin(), alive.end(), true);
      if (left == 1) break;  // resolved only if its interval says so (reported below)
    }
  }
  r.chosen = leader;
  // The race picked the leader because it looked best: its interval on the race's own rounds
  // would be biased (the winner's curse). Fresh paired rounds of it against the baseline give the
  // interval reported.
  Rounds confirm(n);
  if (r.chosen != base) {
    for (int k = 0; k < o.confirm_rounds; ++k) {
      std::vector<std::size_t> pair = {r.chosen, base};
      std::shuffle(pair.begin(), pair.end(), rng);
      for (std::size_t c : pair) {
        Measurement m = backend.measure(c, o.window_s);
        m.round = o.max_rounds + k;
        r.search_s += m.seconds;
        ++r.measurements;
        confirm[c][k] = m;
        r.all.push_back(m);
      }
    }
  }
  for (std::size_t c = 0; c < n; ++c) {
    auto& x = r.candidates[c];
    x.rounds = static_cast<int>(rounds[c].size());
    x.ms = median_of(rounds[c], ms);
    x.joules = median_of(rounds[c], joules);
    x.score = median_of(rounds[c], score);
  }
  if (r.chosen != base && o.confirm_rounds >= 2) {
    auto [s, sb] = pairs(confirm, r.chosen, base, score);
    r.score_ratio = ratio_interval(s, sb, o.seed + 7);
    auto [t, tb] = pairs(confirm, r.chosen, base, ms);
    r.time_ratio = ratio_interval(t, tb, o.seed + 8);
    auto [e, eb] = pairs(confirm, r.chosen, base, joules);
    r.energy_ratio = ratio_interval(e, eb, o.seed + 9);
  } else if (r.chosen != base) {
    r.score_ratio = r.time_ratio = r.energy_ratio = {0, 1, INFINITY};  // not confirmed
  } else {
    r.score_ratio = r.time_ratio = r.energy_ratio = {1, 1, 1};
  }
  // A window lasts whole iterations, so at least window_s, longer for a count whose iterations
  // are long: each count's windows as long as ours of it were; one never measured (the model
  // pruned it) as long as whole iterations of the model's length make, else as our longest.
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
  auto iv = [](const Interval& i) {
    return nlohmann::json{{"lo", i.lo}, {"mid", i.mid}, {"hi", i.hi}};
  };
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
          {"score_ratio", iv(r.score_ratio)},
          {"time_ratio", iv(r.time_ratio)},
          {"energy_ratio", iv(r.energy_ratio)},
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

}  // namespace powershape::experiment
