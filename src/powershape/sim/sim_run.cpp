#include "powershape/sim/sim_run.hpp"

#include "powershape/analysis/summary_table.hpp"
#include "powershape/sim/tables.hpp"
#include "powershape/util/error.hpp"

namespace powershape::sim {

SimRun run_sim(SimRequest q, const SimSay& say) {
  SimRun r;
  r.profile = load_profile(q.profile);
  Profile& p = r.profile;
  if (!q.power_mode.empty()) apply_power_mode(p, q.power_mode);
  SimOptions& o = q.run;
  if (o.power_limit_w > p.power_limit_w && o.power_limit_w <= 2 * p.power_limit_w && say.warn) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "a power limit of %.0f W is above %s's own %.0f W limit (the card would refuse "
                  "it); simulated as asked",
                  o.power_limit_w, p.name.c_str(), p.power_limit_w);
    say.warn(line);
  }
  auto plans = workload_plans(q.workload, {p.peak_flops_per_s(), p.peak_bytes_per_s()});
  if (plans.size() != 1)
    throw invalid_input("chunks", "sim runs one chunk count (repro compares several)");
  r.plan = plans.front();
  if (o.iterations > 0) o.seconds = 0;
  o.step_s = q.step_ms * 1e-3;
  check_settings(p, o);
  check_run(p, r.plan, o.iterations, o.seconds, o.step_s);
  if (say.start)
    say.start("simulated device: " + p.name + " (" + p.status + " profile), workload " +
              r.plan.name);
  r.result = simulate(p, r.plan, o);
  r.summaries = analysis::summarize(r.result.trace);
  return r;
}

void print_sim_run(std::FILE* out, const SimRun& r, const std::string& kept_in) {
  analysis::print_summaries(out, "'" + r.plan.name + "'", r.result.trace, r.summaries, kept_in);
  print_run(out, r.plan, r.result);
}

}  // namespace powershape::sim
