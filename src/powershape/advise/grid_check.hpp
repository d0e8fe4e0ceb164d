#pragma once
// A configuration's power held to a grid spec (analysis/swing.hpp): each of its runs analysed
// alone, each limit's worst run kept. And a setting's swing predicted from the job's power as
// found: a power limit clips it at the limit, a clock cap scales what is above its lowest by the
// predicted mean power (the shape of a step stays; only its height changes).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "powershape/advise/setting.hpp"
#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/swing.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::advise {

struct GridCheck {
  std::string name;
  bool predicted = false;
  std::vector<analysis::Verdict> verdicts;  // per limit, the worst run's
  std::string problem;                      // a run that could not be analysed, and why
  // Every limit known and none exceeded. A limit not known (a band above the readings' Nyquist
  // frequency, a share of a rated power not given) does not pass.
  bool pass() const;
  std::vector<std::string> exceeded() const;  // the limits exceeded or not known, each said so
  std::string describe() const;               // "within it", or "exceeds: " and those limits
};

// The swing of GPU power over each [begin, end) of `runs`, scaled to `gpus` GPUs in step, against
// `spec`; the verdict of each limit is its worst run's (the largest measured over allowed).
GridCheck check_runs(const std::string& name, const trace::Trace& t,
                     const std::vector<std::pair<int64_t, int64_t>>& runs,
                     const analysis::GridSpec& spec, double gpus);

// `pick` predicted from the as-found run [begin, end) of `t` whose predicted outcome is `base`.
GridCheck check_predicted(const trace::Trace& t, int64_t begin, int64_t end, const Outcome& base,
                          const Outcome& pick, const analysis::GridSpec& spec, double gpus);

// Among predicted `outcomes` (as found first, its own check `as_found`), the best `objective`
// whose predicted swing is within the spec and whose predicted slowdown is within `max_slowdown`
// (< 0: any): as found where it is within the spec and no setting within beats it by kMinGain, or
// where none is within. The spec comes first: as found outside it gives way to a setting within
// it at a worse objective. `chosen` gets the chosen setting's check (untouched for as found).
std::size_t choose_within_grid(const std::vector<Outcome>& outcomes,
                               const experiment::Objective& objective, double max_slowdown,
                               const GridCheck& as_found, const trace::Trace& t, int64_t begin,
                               int64_t end, const analysis::GridSpec& spec, double gpus,
                               GridCheck* chosen);

nlohmann::json to_json(const GridCheck& c);

}  // namespace powershape::advise
