#include "powershape/optimize/optimize.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "powershape/advise/settings_backend.hpp"
#include "powershape/analysis/summary.hpp"
#include "powershape/experiment/command_backend.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/experiment/tune_cache.hpp"
#include "powershape/shape/floor_controller.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/trace/json_codec.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/printable.hpp"
#include "powershape/util/signals.hpp"

namespace powershape::optimize {
using advise::GridCheck;
namespace {

constexpr const char* kPlaceholder = "{chunks}";
// The confirmation's fresh pairs (the choice against the job as found): 3, or 2 where the budget is
// short (a t interval on 2 pairs is wide, but still an interval). No warm-up: the job as found has
// just warmed the GPU.
constexpr int kConfirmRounds = 3, kFewestConfirmRounds = 2;
// A run may take this much longer than the job as found did before the budget plan breaks.
constexpr double kRunMargin = 1.25;

bool has_placeholder(const std::vector<std::string>& command) {
  return std::any_of(command.begin(), command.end(), [](const std::string& w) {
    return w.find(kPlaceholder) != std::string::npos;
  });
}

std::vector<std::string> with_count(const std::vector<std::string>& command, int chunks) {
  std::vector<std::string> out = {"env", std::string(kChunksEnv) + "=" + std::to_string(chunks)};
  for (std::string w : command) {
    for (auto at = w.find(kPlaceholder); at != std::string::npos; at = w.find(kPlaceholder, at))
      w.replace(at, std::string(kPlaceholder).size(), std::to_string(chunks));
    out.push_back(std::move(w));
  }
  return out;
}

// The part of the trace one run covers, with the steps inside it as regions (what the trace
// advisor learns a step's clock share from).
trace::Trace run_trace(const trace::Trace& t, int64_t begin, int64_t end,
                       const std::vector<telemetry::Region>& steps) {
  trace::Trace out = trace::samples_between(t, begin, end);
  for (const auto& r : steps) {
    if (r.begin_ns >= begin && r.end_ns <= end) out.regions.push_back(r);
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

Diagnosis diagnose(const trace::Trace& t, const experiment::Measurement& m, int64_t begin,
                   int64_t end, const std::vector<telemetry::Region>& steps) {
  Diagnosis d;
  d.as_found = m;
  d.by_steps = !steps.empty();
  d.run_s = static_cast<double>(end - begin) * 1e-9;
  if (!t.devices.empty() && t.devices[0].max_sm_clock_mhz.ok())
    d.max_clock_mhz = t.devices[0].max_sm_clock_mhz.value;
  const analysis::Summary s =
      analysis::summarize(t, 0, "as found", steps.empty() ? begin : steps.front().begin_ns,
                          steps.empty() ? end : steps.back().end_ns);
  d.power_capped = s.power_capped_fraction().value_or(0);
  d.thermal = s.thermal_fraction().value_or(0);
  analysis::PhaseOptions po;
  // The job's work: its steps' span where it marks steps (start-up is not the job), else the run.
  const int64_t from = steps.empty() ? begin : steps.front().begin_ns;
  const int64_t to = steps.empty() ? end : steps.back().end_ns;
  po.window_s = std::clamp(static_cast<double>(to - from) * 1e-9 / 20, 0.05, 1.0);
  std::vector<analysis::PhaseWindow> windows;
  try {
    windows = analysis::classify_phases(t, 0, po, from, to);
  } catch (const std::exception&) {
    // No power readings over the run: no classes, and no clock-based cost either.
  }
  d.shares = analysis::phase_shares(windows);
  // No recorded maximum, or one the card ran above (a driver's boost table, a replayed trace):
  // the highest clock seen is the maximum.
  for (const auto& w : windows) d.max_clock_mhz = std::max(d.max_clock_mhz, w.sm_clock_mhz);
  d.max_clock_mhz = std::max(d.max_clock_mhz, m.sm_clock_mhz);
  double busy = 0, reduced = 0, lost = 0;
  for (const auto& w : windows) {
    if (w.cls == analysis::PhaseClass::kIdle || w.sm_clock_mhz <= 0 || d.max_clock_mhz <= 0)
      continue;
    busy += w.seconds();
    const double ratio = std::min(1.0, w.sm_clock_mhz / d.max_clock_mhz);
    if (ratio < 0.97) reduced += w.seconds();
    // The work that follows the clock: all of a compute-bound window, half of a bursty one (its
    // products), little of a memory-bound one; at the max clock it would take ratio of the time.
    const double share = w.cls == analysis::PhaseClass::kCompute  ? 1.0
                         : w.cls == analysis::PhaseClass::kBursty ? 0.5
                                                                  : 0.1;
    lost += w.seconds() * share * (1 - ratio);
  }
  d.reduced_clock = busy > 0 ? reduced / busy : 0;
  const double span_s = static_cast<double>(to - from) * 1e-9;
  d.throttle_cost = span_s > 0 ? lost / span_s : 0;
  if (steps.size() >= 3) {
    std::vector<double> clocks;
    for (std::size_t i = 0; i < steps.size() && i < 2000; ++i) {
      experiment::Measurement one;
      experiment::add_telemetry(one, t, steps[i].begin_ns, steps[i].end_ns);
      if (one.sm_clock_mhz > 0) clocks.push_back(one.sm_clock_mhz);
    }
    const double mid = median(clocks);
    if (!clocks.empty() && mid > 0) {
      d.dipped_steps =
          static_cast<double>(std::count_if(clocks.begin(), clocks.end(),
                                            [&](double c) { return c < 0.97 * mid; })) /
          static_cast<double>(clocks.size());
    }
  }
  return d;
}

// The budget's plan for the race: rounds of every candidate, as many as fit (at most 8), with 3
// confirmation pairs, else 2, the candidates cut from the end of the list until two rounds fit;
// 0 rounds: no race.
int plan_rounds(double run_s, double left_s, std::size_t& candidates, int& confirm) {
  const double runs = left_s / (std::max(run_s, 1e-3) * kRunMargin);
  for (; candidates >= 2; --candidates) {
    for (confirm = kConfirmRounds; confirm >= kFewestConfirmRounds; --confirm) {
      const int rounds =
          static_cast<int>(std::floor((runs - 2 * confirm) / static_cast<double>(candidates)));
      if (rounds >= 2) return std::min(rounds, 8);
    }
  }
  return 0;
}

// What the recommendation saves against a step (or run) of `ms` and `j` as found, `steps` a run.
Recommendation savings(Recommendation r, double ms, double j, int steps) {
  r.ms_saved_per_step = ms * (1 - r.time_ratio.mid);
  r.j_saved_per_step = j * (1 - r.energy_ratio.mid);
  // An hour of the job: its steps at the recommended pace, each saving that energy.
  const double steps_per_hour = ms > 0 ? 3600e3 / (ms * r.time_ratio.mid) : 0;
  r.wh_saved_per_hour = r.j_saved_per_step * steps_per_hour / 3600;
  r.wh_saved_per_run = r.j_saved_per_step * steps / 3600;
  return r;
}

// The predicted setting measured: paired runs of the job as found without and with it (applied
// for that run alone, then put back), as many pairs as the budget allows, at most 4.
void measure_setting(const Options& o, Result& r, const std::vector<std::string>& command,
                     int64_t deadline, Recommendation& s) {
  const double left_s = static_cast<double>(deadline - telemetry::steady_now_ns()) * 1e-9;
  const int pairs =
      std::min(4, static_cast<int>(left_s / (2 * std::max(r.diagnosis.run_s, 1e-3) * kRunMargin)));
  if (pairs < 2) {
    r.notes.push_back(
        "the setting was not measured: two pairs of runs would not fit in the budget");
    return;
  }
  const advise::Setting& setting = r.advice->outcomes[r.advice->chosen].setting;
  if (o.progress) o.progress("measuring " + setting.describe() + " against the job as found");
  auto target = o.apply_target();
  experiment::CommandBackend backend({command}, o.source, o.region);
  backend.set_deadline(deadline);
  // The job as found and under the setting, a pair of runs a round, which goes first alternating,
  // the setting held for its own runs alone: a design of two configurations, as `compare` runs.
  advise::SettingsBackend paired(backend, 0, *target, {advise::Setting{}, setting},
                                 advise::state_dir());
  experiment::Design design;
  design.rounds = pairs;
  design.window_s = 1;      // not used: a run lasts what the command takes
  design.warmup_max_s = 0;  // the runs before were the warm-up
  design.seed = o.seed;
  design.rotate = true;
  const experiment::Result x = experiment::run_design(paired, design);
  s.measured = true;
  s.time_ratio = x.configs[1].time_ratio;
  s.energy_ratio = x.configs[1].energy_ratio;
  std::vector<double> scores[2];
  for (const auto& m : x.measurements)
    scores[m.config].push_back(r.objective.score(m.ms_per_iteration, m.j_per_iteration()));
  s.score_ratio = experiment::ratio_interval(scores[1], scores[0], o.seed + 2);
  if (s.score_ratio.hi >= 1) {
    r.notes.push_back(setting.describe() + " measured: not resolved better than the job as found");
  }
}

// Each raced configuration's runs (the race's regions named as it) held to the grid spec.
void check_raced(Result& r, const trace::Trace& raced, const analysis::GridSpec& spec,
                 double gpus) {
  for (const auto& name : r.candidates) {
    std::vector<std::pair<int64_t, int64_t>> runs;
    for (const auto& g : raced.regions)
      if (g.gpu == -1 && g.name == name) runs.emplace_back(g.begin_ns, g.end_ns);
    if (runs.empty()) continue;
    GridCheck c = advise::check_runs(name, raced, runs, spec, gpus);
    // The race's runs of the job as found stand for it in place of its single first run.
    if (!r.grid.empty() && r.grid.front().name == name)
      r.grid.front() = std::move(c);
    else
      r.grid.push_back(std::move(c));
  }
}

// The note when no configuration is within the spec: the one that exceeds the fewest limits.
void note_none_within(Result& r) {
  const GridCheck* closest = nullptr;
  for (const auto& c : r.grid)
    if (!closest || c.exceeded().size() < closest->exceeded().size()) closest = &c;
  if (closest == nullptr) return;
  std::string what;
  for (const auto& e : closest->exceeded()) what += (what.empty() ? "" : ", ") + e;
  r.notes.push_back("no configuration is within the grid spec; the closest, " + closest->name +
                    ", exceeds: " + what);
}

// The raced configuration of the best median objective among those within the grid spec (and
// the slowdown bound), with its ratios to the baseline on the rounds both ran; none where that is
// the baseline or no configuration is within the spec. The spec comes first: a baseline outside
// it gives way to one within it even at a worse objective.
std::optional<Recommendation> raced_within_grid(const Options& o, Result& r) {
  const auto& race = *r.race;
  const auto within = [&](const std::string& name) {
    return std::any_of(r.grid.begin(), r.grid.end(), [&](const GridCheck& c) {
      return !c.predicted && c.name == name && c.pass();
    });
  };
  const auto& base = race.candidates[race.baseline];
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < race.candidates.size(); ++i) {
    const auto& c = race.candidates[i];
    if (c.rounds == 0 || !within(c.name)) continue;
    if (i != race.baseline && o.max_slowdown >= 0 && c.ms > base.ms * (1 + o.max_slowdown))
      continue;
    if (!best || c.score < race.candidates[*best].score) best = i;
  }
  if (!best) {
    note_none_within(r);
    return std::nullopt;
  }
  if (*best == race.baseline) return std::nullopt;
  std::map<int, const experiment::Measurement*> rounds[2];
  for (const auto& m : race.all) {
    if (m.round >= 0 && (m.config == *best || m.config == race.baseline))
      rounds[m.config == *best ? 1 : 0][m.round] = &m;
  }
  std::vector<double> ms[2], joules[2], score[2];
  for (const auto& [round, m1] : rounds[1]) {
    const auto it = rounds[0].find(round);
    if (it == rounds[0].end()) continue;
    for (int k = 0; k < 2; ++k) {
      const experiment::Measurement& m = k == 1 ? *m1 : *it->second;
      ms[k].push_back(m.ms_per_iteration);
      joules[k].push_back(m.j_per_iteration());
      score[k].push_back(r.objective.score(m.ms_per_iteration, m.j_per_iteration()));
    }
  }
  Recommendation x;
  x.kind = r.candidates[*best].rfind("floor ", 0) == 0 ? Recommendation::kFloor
                                                       : Recommendation::kChunks;
  x.what = r.candidates[*best];
  x.measured = true;
  const auto& pick = race.candidates[*best];
  if (ms[0].size() >= 2) {
    x.time_ratio = experiment::ratio_interval(ms[1], ms[0], o.seed);
    x.energy_ratio = experiment::ratio_interval(joules[1], joules[0], o.seed + 1);
    x.score_ratio = experiment::ratio_interval(score[1], score[0], o.seed + 2);
  } else {  // one shared round: the medians, without an interval
    const double t = base.ms > 0 ? pick.ms / base.ms : 1,
                 e = base.joules > 0 ? pick.joules / base.joules : 1;
    const double q = base.score > 0 ? pick.score / base.score : 1;
    x.time_ratio = {t, t, t};
    x.energy_ratio = {e, e, e};
    x.score_ratio = {q, q, q};
  }
  // Where the job as found is within the spec too, only a win beyond the noise is one.
  if (within(r.candidates[race.baseline]) && !(x.score_ratio.hi < 1)) return std::nullopt;
  return x;
}

// The predicted setting chosen within the grid spec; its check joins r.grid.
void choose_within_grid(const Options& o, Result& r, int64_t b0, int64_t e0) {
  GridCheck c;
  r.advice->chosen =
      advise::choose_within_grid(r.advice->outcomes, r.objective, o.max_slowdown, r.grid.front(),
                                 r.trace, b0, e0, *o.grid, o.grid_gpus, &c);
  if (r.advice->chosen != 0) r.grid.push_back(std::move(c));
}

}  // namespace

std::vector<std::vector<std::string>> chunk_commands(const std::vector<std::string>& command,
                                                     const std::vector<int>& chunks,
                                                     std::vector<std::string>* names) {
  if (command.empty()) throw invalid_input("command", "give the job to run after --");
  if (chunks.empty()) throw invalid_input("chunks", "give one chunk count or more");
  std::set<int> seen;
  for (int c : chunks) {
    if (c < 1 || c > 4096)
      throw invalid_input("chunks", "counts are 1..4096, not " + std::to_string(c));
    if (!seen.insert(c).second)
      throw invalid_input("chunks", std::to_string(c) + " is listed twice");
  }
  if (chunks.size() > 16) throw invalid_input("chunks", "at most 16 counts");
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> labels;
  if (!has_placeholder(command)) {
    out.push_back(command);
    labels.push_back("as found");
  }
  for (int c : chunks) {
    out.push_back(with_count(command, c));
    labels.push_back(std::string(kChunksEnv) + "=" + std::to_string(c));
  }
  if (out.size() < 2)
    throw invalid_input("chunks", "with {chunks} in the command, give two counts or more");
  if (names) *names = labels;
  return out;
}

std::vector<std::vector<std::string>> floor_commands(const std::vector<std::string>& command,
                                                     const Options& o,
                                                     std::vector<std::string>* names) {
  std::vector<std::vector<std::string>> out;
  if (o.floors.empty()) return out;
  if (o.smooth_exe.empty()) throw invalid_input("floor", "no powershape to run smooth with");
  if (o.floors.size() > 8) throw invalid_input("floor", "at most 8 floors");
  for (const auto& f : o.floors) {
    shape::parse_floor(f);  // W, or N% of the power limit: the range smooth takes
    std::vector<std::string> c = {o.smooth_exe, "smooth", "--floor", f};
    if (!o.floor_gap.empty()) c.insert(c.end(), {"--gap", o.floor_gap});
    if (o.floor_ramp_w_per_s > 0)
      c.insert(c.end(), {"--ramp", std::to_string(o.floor_ramp_w_per_s)});
    c.push_back("--");
    c.insert(c.end(), command.begin(), command.end());
    out.push_back(std::move(c));
    if (names) names->push_back("floor " + f);
  }
  return out;
}

void check_environment() {
  // The as-found runs pass the caller's environment to the job as it is: a count there that the
  // op would refuse (or silently read) is said now, not after a budget of runs.
  if (const char* env = std::getenv(kChunksEnv); env != nullptr && *env != '\0') {
    const std::string text(env);
    int count = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (ec != std::errc() || end != text.data() + text.size() || count < 1 ||
        count > workload::kMaxChunks)
      throw invalid_input(std::string(kChunksEnv) + ": '" + util::printable(text) +
                          "' in this environment: the job's as-found runs would get it; "
                          "expected a chunk count (1-" +
                          std::to_string(workload::kMaxChunks) + ") or nothing");
  }
}

Result run(const Options& o) {
  if (!(o.budget_s >= 1 && o.budget_s <= 7 * 86400))
    throw invalid_input("budget", "1 s to a week, not " + std::to_string(o.budget_s));
  if (o.tokens_per_step < 0 || !std::isfinite(o.tokens_per_step))
    throw invalid_input("tokens per step", "a count of 0 or more");
  experiment::parse_objective(o.objective, 0);  // a bad objective is named before the job runs
  check_environment();
  const int64_t start = telemetry::steady_now_ns();
  const int64_t deadline = start + static_cast<int64_t>(o.budget_s * 1e9);
  const auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  if (o.grid && !(o.grid_gpus >= 1 && o.grid_gpus <= 1e8))
    throw invalid_input("grid-gpus", "1 to 10^8 GPUs");
  Result r;
  auto commands = chunk_commands(o.command, o.chunks, &r.candidates);
  for (auto& c : floor_commands(commands[0], o, &r.candidates)) commands.push_back(std::move(c));
  say("the job as found");
  int64_t b0 = 0, e0 = 0;
  experiment::Measurement m0;
  std::vector<telemetry::Region> steps;
  {
    // Its own session, closed before the race opens another on the same source.
    experiment::CommandBackend backend({commands[0]}, o.source, o.region);
    backend.set_names({r.candidates[0]});
    backend.set_deadline(deadline);
    r.device = backend.describe();
    r.objective = experiment::parse_objective(
        o.objective, experiment::device_power_limit_w(backend.device_json()));
    b0 = backend.now_ns();
    m0 = backend.measure(0, 0);
    e0 = backend.now_ns();
    r.trace = backend.recorded();
    steps = backend.steps();
  }
  r.diagnosis = diagnose(r.trace, m0, b0, e0, steps);
  if (o.grid)
    r.grid.push_back(
        advise::check_runs(r.candidates[0], r.trace, {{b0, e0}}, *o.grid, o.grid_gpus));

  // Settings, predicted from the as-found run's trace (no setting is changed).
  try {
    advise::TraceAdviceOptions ao;
    ao.profile = o.profile;
    ao.objective = r.objective;
    ao.max_slowdown = o.max_slowdown;
    ao.window_s = std::clamp(r.diagnosis.run_s / 20, 0.05, 1.0);
    r.advice = advise::from_trace(run_trace(r.trace, b0, e0, steps), "the job as found", ao);
  } catch (const std::exception& e) {
    r.notes.push_back(std::string("no power limit or clock cap predicted: ") + e.what());
  }

  // The chunk counts, raced within what is left of the budget.
  std::size_t n = commands.size();
  const double left_s = static_cast<double>(deadline - telemetry::steady_now_ns()) * 1e-9;
  int confirm = kConfirmRounds;
  const int rounds = plan_rounds(r.diagnosis.run_s, left_s, n, confirm);
  if (rounds == 0) {
    char why[200];
    std::snprintf(why, sizeof why,
                  "nothing raced: a run takes %.1f s, and two rounds of two configurations and "
                  "two confirming pairs would not fit in the %.1f s of the budget left",
                  r.diagnosis.run_s, std::max(0.0, left_s));
    r.notes.push_back(why);
  } else {
    if (n < commands.size()) {
      std::string cut;
      for (std::size_t i = n; i < commands.size(); ++i)
        cut += (cut.empty() ? "" : ", ") + r.candidates[i];
      r.notes.push_back("not raced, for the budget: " + cut);
      commands.resize(n);
      r.candidates.resize(n);
    }
    experiment::CommandBackend racer(commands, o.source, o.region);
    racer.set_names(r.candidates);  // the race's results and runs named as the configurations
    racer.set_deadline(deadline);
    experiment::TuneOptions to;
    to.objective = r.objective;
    to.max_slowdown = o.max_slowdown;
    to.max_rounds = rounds;
    to.confirm_rounds = confirm;
    to.seed = o.seed;
    to.warmup.warmup_window_s = 1e-3;
    to.warmup.warmup_max_s = 0;
    to.warmup.on_round = [&](int round, int total, double) {
      say("race: round " + std::to_string(round) + " of at most " + std::to_string(total));
    };
    say("racing " + std::to_string(n) + " configurations, at most " + std::to_string(rounds) +
        " rounds");
    try {
      r.race = experiment::tune(racer, to);
    } catch (const std::exception& e) {
      // What was measured stays: the runs so far are in the trace, and the caller still writes
      // the JSON and the report. A job that failed, or a signal, is the caller's to report as a
      // failure (a deadline that passed is not).
      r.notes.push_back(std::string("the race stopped: ") + e.what());
      if (kind_of(e) != ErrorKind::kDevice || util::received_signal() != 0) r.failure = e.what();
    }
    trace::Trace more = racer.recorded();
    if (o.grid) check_raced(r, more, *o.grid, o.grid_gpus);
    r.trace.samples.insert(r.trace.samples.end(), more.samples.begin(), more.samples.end());
    r.trace.regions.insert(r.trace.regions.end(), more.regions.begin(), more.regions.end());
  }
  if (o.grid && r.advice) choose_within_grid(o, r, b0, e0);

  // One recommendation: the better objective of the measured chunk count and the predicted
  // (or, given a target, measured) setting, each only where it beats the job as found.
  std::optional<Recommendation> chunks, setting;
  if (o.grid && r.race) {
    chunks = raced_within_grid(o, r);
  } else if (r.race && r.race->chosen != r.race->baseline && r.race->score_ratio.hi < 1) {
    Recommendation c;
    c.kind = Recommendation::kChunks;
    c.what = r.candidates[r.race->chosen];
    c.measured = true;
    c.time_ratio = r.race->time_ratio;
    c.energy_ratio = r.race->energy_ratio;
    c.score_ratio = r.race->score_ratio;
    chunks = c;
  }
  if (r.advice && r.advice->chosen != 0) {
    const auto& base = r.advice->outcomes[0];
    const auto& pick = r.advice->outcomes[r.advice->chosen];
    Recommendation s;
    s.kind = Recommendation::kSetting;
    s.what = pick.setting.describe();
    s.time_ratio = pick.time_ratio;
    s.energy_ratio = pick.energy_ratio;
    const double b = r.objective.score(base.ms, base.joules);
    const double mid = b > 0 ? r.objective.score(pick.ms, pick.joules) / b : 1;
    s.score_ratio = {mid, mid, mid};
    setting = s;
    if (o.apply_target && r.failure.empty()) {
      try {
        measure_setting(o, r, commands[0], deadline, *setting);
      } catch (const std::exception& e) {  // the setting is back as found (Applied's destructor)
        r.notes.push_back(std::string("the setting's runs stopped: ") + e.what());
        if (kind_of(e) != ErrorKind::kDevice || util::received_signal() != 0) r.failure = e.what();
      }
    }
  }
  // Savings against the as-found figures of the same session as the ratios: the race's own
  // baseline for a chunk count, the as-found run for a setting predicted from it.
  const experiment::Measurement& m = r.diagnosis.as_found;
  if (setting && setting->measured && setting->score_ratio.hi >= 1) setting.reset();
  if (chunks && (!setting || chunks->score_ratio.mid <= setting->score_ratio.mid)) {
    const auto& base = r.race->candidates[r.race->baseline];
    r.recommendation = savings(*chunks, base.ms, base.joules, m.iterations);
  } else if (setting) {
    r.recommendation = savings(*setting, m.ms_per_iteration, m.j_per_iteration(), m.iterations);
  }
  r.elapsed_s = static_cast<double>(telemetry::steady_now_ns() - start) * 1e-9;
  return r;
}

nlohmann::json to_json(const Result& r) {
  const Diagnosis& d = r.diagnosis;
  nlohmann::json shares = nlohmann::json::array();
  for (const auto& s : d.shares) {
    shares.push_back(
        {{"class", analysis::to_string(s.cls)}, {"seconds", s.seconds}, {"energy_j", s.energy_j}});
  }
  nlohmann::json j = {{"device", r.device},
                      {"objective", r.objective.describe()},
                      {"as_found",
                       {{"measurement", experiment::to_json(d.as_found)},
                        {"by_steps", d.by_steps},
                        {"run_s", d.run_s},
                        {"max_clock_mhz", d.max_clock_mhz},
                        {"power_capped", d.power_capped},
                        {"thermal", d.thermal},
                        {"reduced_clock", d.reduced_clock},
                        {"dipped_steps", d.dipped_steps},
                        {"throttle_cost", d.throttle_cost},
                        {"throttled", d.throttled()},
                        {"phases", shares}}},
                      {"candidates", r.candidates},
                      {"notes", r.notes},
                      {"failure", r.failure},
                      {"elapsed_s", r.elapsed_s}};
  if (r.race) j["race"] = experiment::to_json(*r.race);
  if (!r.grid.empty()) {
    nlohmann::json g = nlohmann::json::array();
    for (const auto& c : r.grid) g.push_back(to_json(c));
    j["grid"] = g;
  }
  const Recommendation& x = r.recommendation;
  j["recommendation"] = {{"kind", x.kind == Recommendation::kNone     ? "none"
                                  : x.kind == Recommendation::kChunks ? "chunks"
                                  : x.kind == Recommendation::kFloor  ? "floor"
                                                                      : "setting"},
                         {"what", x.what},
                         {"measured", x.measured},
                         {"time_ratio", experiment::to_json(x.time_ratio)},
                         {"energy_ratio", experiment::to_json(x.energy_ratio)},
                         {"ms_saved_per_step", x.ms_saved_per_step},
                         {"j_saved_per_step", x.j_saved_per_step},
                         {"wh_saved_per_hour", x.wh_saved_per_hour},
                         {"wh_saved_per_run", x.wh_saved_per_run}};
  return j;
}

}  // namespace powershape::optimize
