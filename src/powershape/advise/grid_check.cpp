#include "powershape/advise/grid_check.hpp"

#include <algorithm>
#include <cmath>

#include "powershape/analysis/power_input.hpp"
#include "powershape/util/error.hpp"

namespace powershape::advise {
namespace {

// The driver's power samples are 20 ms means; a run shorter than 64 of them is resampled finer
// (down to 1 ms) so that it still has a series to analyse.
double dt_for(int64_t begin, int64_t end) {
  return std::clamp(static_cast<double>(end - begin) * 1e-9 / 64, 1e-3, 0.02);
}

analysis::Swing swing_of(const analysis::PowerSeries& p, double rated_w,
                         const analysis::GridSpec& spec, double gpus) {
  return analysis::analyse_swing(p, spec, analysis::swing_options(spec, rated_w, gpus));
}

// How far over its limit a verdict is (> 1: exceeded); an unknown one counts as exceeded.
double excess(const analysis::Verdict& v) {
  if (!v.known || !(v.allowed > 0)) return HUGE_VAL;
  return v.measured / v.allowed;
}

void keep_worst(GridCheck& c, const analysis::Swing& s) {
  if (c.verdicts.empty()) {
    c.verdicts = s.verdicts;
    return;
  }
  for (std::size_t i = 0; i < c.verdicts.size() && i < s.verdicts.size(); ++i) {
    if (excess(s.verdicts[i]) > excess(c.verdicts[i]) ||
        (!s.verdicts[i].pass && c.verdicts[i].pass))
      c.verdicts[i] = s.verdicts[i];
  }
}

}  // namespace

bool GridCheck::pass() const {
  return problem.empty() && !verdicts.empty() &&
         std::all_of(verdicts.begin(), verdicts.end(),
                     [](const auto& v) { return v.known && v.pass; });
}

std::vector<std::string> GridCheck::exceeded() const {
  std::vector<std::string> out;
  if (!problem.empty()) out.push_back("not analysed (" + problem + ")");
  for (const auto& v : verdicts) {
    if (!v.known)
      out.push_back(v.limit + " (not known)");
    else if (!v.pass)
      out.push_back(v.limit);
  }
  return out;
}

std::string GridCheck::describe() const {
  std::string what;
  for (const auto& e : exceeded()) what += (what.empty() ? "" : ", ") + e;
  return pass() ? "within it" : "exceeds: " + what;
}

GridCheck check_runs(const std::string& name, const trace::Trace& t,
                     const std::vector<std::pair<int64_t, int64_t>>& runs,
                     const analysis::GridSpec& spec, double gpus) {
  GridCheck c;
  c.name = name;
  for (const auto& [b, e] : runs) {
    try {
      const analysis::PowerInput in = analysis::trace_power(t, b, e, dt_for(b, e));
      keep_worst(c, swing_of(in.power, in.rated_w, spec, gpus));
    } catch (const std::runtime_error& x) {
      c.problem = x.what();  // a run without readings enough: not known to be within it
    }
  }
  if (c.verdicts.empty() && c.problem.empty()) c.problem = "no run to hold to the grid spec";
  return c;
}

GridCheck check_predicted(const trace::Trace& t, int64_t begin, int64_t end, const Outcome& base,
                          const Outcome& pick, const analysis::GridSpec& spec, double gpus) {
  GridCheck c;
  c.name = pick.setting.describe();
  c.predicted = true;
  try {  // a span without readings enough is not known to be within it
    analysis::PowerInput in = analysis::trace_power(t, begin, end, dt_for(begin, end));
    auto& w = in.power.w;
    const double low = w.empty() ? 0 : *std::min_element(w.begin(), w.end());
    // The trace's GPUs each held at the limit: the sum at the limit times their number.
    const double gpus_in = std::max(1, in.gpus);
    const double cap =
        pick.setting.power_limit_w > 0 ? pick.setting.power_limit_w * gpus_in : HUGE_VAL;
    const double above = base.mean_power_w - low / gpus_in;
    const double k = pick.setting.clock_cap_mhz > 0 && above > 0
                         ? std::clamp((pick.mean_power_w - low / gpus_in) / above, 0.0, 1.5)
                         : 1.0;
    for (double& x : w) x = std::min(cap, low + (x - low) * k);
    keep_worst(c, swing_of(in.power, in.rated_w, spec, gpus));
  } catch (const std::runtime_error& x) {
    c.problem = x.what();
  }
  return c;
}

std::size_t choose_within_grid(const std::vector<Outcome>& outcomes,
                               const experiment::Objective& objective, double max_slowdown,
                               const GridCheck& as_found, const trace::Trace& t, int64_t begin,
                               int64_t end, const analysis::GridSpec& spec, double gpus,
                               GridCheck* chosen) {
  if (outcomes.empty()) return 0;
  const auto score = [&](const Outcome& x) { return objective.score(x.ms, x.joules); };
  const double base = score(outcomes[0]);
  std::vector<std::size_t> order;
  for (std::size_t i = 1; i < outcomes.size(); ++i) {
    if (max_slowdown >= 0 && outcomes[i].time_ratio.mid > 1 + max_slowdown) continue;
    order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return score(outcomes[x]) < score(outcomes[y]); });
  for (std::size_t i : order) {
    if (as_found.pass() && score(outcomes[i]) >= base * (1 - kMinGain)) break;
    GridCheck c = check_predicted(t, begin, end, outcomes[0], outcomes[i], spec, gpus);
    if (!c.pass()) continue;
    if (chosen) *chosen = std::move(c);
    return i;
  }
  return 0;
}

nlohmann::json to_json(const GridCheck& c) {
  nlohmann::json v = nlohmann::json::array();
  for (const auto& x : c.verdicts) {
    v.push_back(
        {{"limit", x.limit},
         {"measured", x.measured},
         {"allowed", std::isfinite(x.allowed) ? nlohmann::json(x.allowed) : nlohmann::json()},
         {"unit", x.unit},
         {"known", x.known},
         {"pass", x.pass}});
  }
  return {{"name", c.name},   {"predicted", c.predicted}, {"problem", c.problem},
          {"pass", c.pass()}, {"exceeded", c.exceeded()}, {"verdicts", v}};
}

}  // namespace powershape::advise
