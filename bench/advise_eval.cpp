// The advisor's targets on simulated devices (issue: energy-optimal settings): over every
// profile and a family of workloads (fine-tuning steps of six public models, full and LoRA, at
// two step sizes; LM heads; matmul-softmax-matmul; square waves):
//  - the search's choice against every settable value simulated: energy within 2% of the
//    exhaustive optimum, the slowdown bound never broken;
//  - the learned selector (features of a short run as found -> the energy-optimal clock cap),
//    its energy against the optimum leaving one workload out and leaving one profile out;
//  - on jetson-agx-orin, the fine-tuning workloads' saving against MAXN, beside the study's.
// --write PATH stores the selector trained on everything (models/advise_selector.json).
//   advise_eval [--write PATH] [--quick]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "powershape/advise/selector.hpp"
#include "powershape/advise/sim_advisor.hpp"
#include "powershape/sim/simulator.hpp"
#include "powershape/util/json_io.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/finetune.hpp"

using namespace powershape;

namespace {

struct Run {
  std::string profile, workload;
  bool finetune = false;
  advise::Features features;
  std::vector<advise::Outcome> sweep;  // every clock cap, the baseline first
  std::size_t best = 0;                // the energy optimum
  double max_mhz = 0;
};

std::vector<std::pair<std::string, workload::Plan>> workloads(const sim::Profile& p, bool quick) {
  std::vector<std::pair<std::string, workload::Plan>> out;
  const workload::Rates r{p.peak_flops_per_s(), p.peak_bytes_per_s()};
  for (const auto& m : workload::known_transformers()) {
    for (int64_t tokens : {1024, 4096}) {
      for (int64_t rank : {0, 16}) {
        if (quick && (tokens == 4096 || rank == 16)) continue;
        workload::Finetune f;
        f.model = m;
        f.tokens = tokens;
        f.seq = 512;
        f.lora_rank = rank;
        auto plan = workload::finetune_plan(f);
        out.emplace_back(plan.name, plan);
      }
    }
  }
  for (auto w :
       std::vector<workload::Workload>{{workload::LmHead{16384, 896, 151936}},
                                       {workload::LmHead{4096, 2048, 128256}},
                                       {workload::Msm{16384, 128, 16384}},
                                       {workload::Square{20, 0.3, workload::Gap::kMemory}},
                                       {workload::Square{200, 0.7, workload::Gap::kIdle}}}) {
    auto plan = workload::make_plan(w, r);
    out.emplace_back(plan.name, plan);
  }
  return out;
}

// The sweep's energy at the clock cap nearest `mhz` (the baseline when over every cap).
double energy_at(const Run& r, double mhz) {
  const advise::Outcome* best = &r.sweep.front();
  double gap = 1e300;
  for (const auto& o : r.sweep) {
    if (o.setting.clock_cap_mhz <= 0) continue;
    if (std::abs(o.setting.clock_cap_mhz - mhz) < gap) {
      gap = std::abs(o.setting.clock_cap_mhz - mhz);
      best = &o;
    }
  }
  if (mhz >= r.max_mhz - 1) best = &r.sweep.front();
  return best->joules;
}

struct Excess {
  double mean = 0, max = 0;
  int n = 0;
};

// The selector trained without the runs `held_out` picks, judged on them; `constant`: the mean
// optimum of the rest instead (what features add over a fixed guess).
double g_lambda = 0.1;  // the selector's ridge penalty (--lambda)

Excess judge(const std::vector<Run>& runs, const std::function<bool(const Run&)>& held_out,
             bool constant = false) {
  std::vector<advise::Features> x;
  std::vector<double> y;
  for (const auto& r : runs) {
    if (held_out(r)) continue;
    x.push_back(r.features);
    y.push_back(r.sweep[r.best].setting.clock_cap_mhz > 0
                    ? r.sweep[r.best].setting.clock_cap_mhz / r.max_mhz
                    : 1.0);
  }
  const auto s = advise::Selector::train(x, y, g_lambda);
  double mean_y = 0;
  for (double v : y) mean_y += v / static_cast<double>(y.size());
  Excess e;
  for (const auto& r : runs) {
    if (!held_out(r)) continue;
    const double share = constant ? mean_y : s.predict(r.features);
    const double got = energy_at(r, share * r.max_mhz);
    const double ex = got / r.sweep[r.best].joules - 1;
    e.mean += ex;
    e.max = std::max(e.max, ex);
    ++e.n;
  }
  if (e.n > 0) e.mean /= e.n;
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"advise_eval: the advisor's targets on simulated devices"};
  std::string write;
  bool quick = false;
  app.add_option("--write", write, "Store the selector trained on every run here");
  app.add_flag("--quick", quick, "One step size and full fine-tuning only");
  app.add_option("--lambda", g_lambda, "The selector's ridge penalty (default 0.1)")
      ->check(CLI::Range(0.0, 1e6));
  CLI11_PARSE(app, argc, argv);

  const std::vector<std::string> profiles = {"h200", "l40s", "rtx4090", "dgx-spark",
                                             "jetson-agx-orin"};
  advise::SimAdviseOptions so;
  so.seconds = 1;
  so.seeds = 2;
  const auto energy = [](const sim::Profile& p) {
    return experiment::parse_objective("energy", p.power_limit_w);
  };
  std::vector<Run> runs;
  int search_sims = 0, sweep_sims = 0, within = 0, total = 0, violations = 0;
  double worst_search = 0;
  std::map<std::string, std::vector<double>> orin_saving;
  for (const auto& name : profiles) {
    const sim::Profile p = sim::load_profile(name);
    const auto range = advise::setting_range(p);
    const std::vector<advise::Knob> knobs =
        p.power_modes.empty()
            ? std::vector<advise::Knob>{advise::Knob::kClock, advise::Knob::kPowerLimit}
            : std::vector<advise::Knob>{advise::Knob::kClock, advise::Knob::kMode};
    for (const auto& [wname, plan] : workloads(p, quick)) {
      Run r;
      r.profile = name;
      r.workload = wname;
      r.finetune = wname.rfind("finetune", 0) == 0;
      r.max_mhz = p.max_mhz;
      {  // the short profiling run as found
        sim::SimOptions o;
        o.seconds = 2;
        o.lead_in_s = 0;
        o.tail_s = 0;
        o.step_s = 5e-4;
        const auto s = sim::simulate(p, plan, o);
        r.features = advise::features_of(s.trace, 0, p.power_limit_w, p.max_mhz);
      }
      // Every settable value of the knobs, against the search, for energy alone and within 10%.
      const auto every =
          advise::simulate_settings(p, plan, advise::exhaustive_settings(range, knobs), so);
      sweep_sims += static_cast<int>(every.size()) * so.seeds;
      for (double bound : {-1.0, 0.10}) {
        const auto obj = energy(p);
        const auto search = advise::search_settings(p, plan, knobs, obj, bound, 8, so);
        search_sims += search.simulations;
        const auto& c = search.outcomes[search.chosen];
        const std::size_t best = advise::choose(every, obj, bound, false);
        const auto it = std::find_if(every.begin(), every.end(),
                                     [&](const auto& x) { return x.setting == c.setting; });
        const double got = it != every.end() ? it->joules : c.joules;
        const double ex = got / every[best].joules - 1;
        worst_search = std::max(worst_search, ex);
        within += ex <= 0.02;
        ++total;
        if (bound >= 0 && it != every.end() && it->time_ratio.mid - 1 > bound + 1e-9) ++violations;
        if (bound < 0 && name == "jetson-agx-orin" && r.finetune)
          orin_saving["search"].push_back(1 - got / every.front().joules);
      }
      // The clock knob alone, for the selector's target.
      for (const auto& o : every)
        if (o.setting.power_limit_w == 0 && o.setting.power_mode.empty()) r.sweep.push_back(o);
      r.best = advise::choose(r.sweep, energy(p), -1, false);
      runs.push_back(r);
      std::fprintf(stderr, "%s %s: optimum %s, energy %.3f of as found\n", name.c_str(),
                   wname.c_str(), r.sweep[r.best].setting.describe().c_str(),
                   r.sweep[r.best].energy_ratio.mid);
    }
  }
  std::printf(
      "search against every settable value: %d of %d choices within 2%% of the optimum's "
      "energy (worst %+.2f%%), slowdown bound 10%% broken %d times; %d simulations "
      "against %d (%.0f%%)\n",
      within, total, worst_search * 100, violations, search_sims, 2 * sweep_sims,
      100.0 * search_sims / (2 * sweep_sims));

  std::map<std::string, bool> names;
  for (const auto& r : runs) names[r.workload] = true;
  for (bool constant : {false, true}) {
    const char* who = constant ? "a constant clock share (reference)" : "selector";
    Excess lowo, lopo;
    double lowo_sum = 0, lopo_sum = 0;
    int lowo_n = 0, lopo_n = 0;
    for (const auto& [w, _] : names) {
      const Excess e = judge(
          runs, [&](const Run& r) { return r.workload == w; }, constant);
      lowo_sum += e.mean * e.n;
      lowo_n += e.n;
      lowo.max = std::max(lowo.max, e.max);
    }
    std::printf(
        "\n%s, leave one workload out: energy over the optimum mean %+.2f%%, worst "
        "%+.2f%% (%d runs)\n",
        who, lowo_sum / lowo_n * 100, lowo.max * 100, lowo_n);
    for (const auto& name : profiles) {
      const Excess e = judge(
          runs, [&](const Run& r) { return r.profile == name; }, constant);
      lopo_sum += e.mean * e.n;
      lopo_n += e.n;
      lopo.max = std::max(lopo.max, e.max);
      std::printf("%s, leave %s out: mean %+.2f%%, worst %+.2f%%\n", who, name.c_str(),
                  e.mean * 100, e.max * 100);
    }
    std::printf("%s, leave one profile out: mean %+.2f%%, worst %+.2f%% (%d runs)\n", who,
                lopo_sum / lopo_n * 100, lopo.max * 100, lopo_n);
  }

  std::vector<double> orin_selector;
  std::vector<advise::Features> x;
  std::vector<double> y;
  for (const auto& r : runs) {
    x.push_back(r.features);
    y.push_back(r.sweep[r.best].setting.clock_cap_mhz > 0
                    ? r.sweep[r.best].setting.clock_cap_mhz / r.max_mhz
                    : 1.0);
  }
  const auto all = advise::Selector::train(x, y, g_lambda);
  for (const auto& r : runs) {
    if (r.profile != "jetson-agx-orin" || !r.finetune) continue;
    // Leave-one-workload-out for the Jetson figure too: the model never saw this workload.
    const std::string w = r.workload;
    std::vector<advise::Features> xs;
    std::vector<double> ys;
    for (std::size_t i = 0; i < runs.size(); ++i)
      if (runs[i].workload != w) {
        xs.push_back(x[i]);
        ys.push_back(y[i]);
      }
    const auto s = advise::Selector::train(xs, ys, g_lambda);
    orin_selector.push_back(1 - energy_at(r, s.predict(r.features) * r.max_mhz) /
                                    r.sweep.front().joules);
  }
  auto stats = [](const std::vector<double>& v) {
    double s = 0, m = 0;
    for (double x : v) {
      s += x;
      m = std::max(m, x);
    }
    return std::make_pair(v.empty() ? 0 : s / static_cast<double>(v.size()), m);
  };
  const auto [sm, sx] = stats(orin_saving["search"]);
  const auto [lm, lx] = stats(orin_selector);
  std::printf(
      "\njetson-agx-orin, %zu fine-tuning workloads, energy saved against MAXN as found:\n"
      "  search (clock caps and modes): mean %.2f%%, most %.2f%%\n"
      "  selector (no sweep, workload left out): mean %.2f%%, most %.2f%%\n"
      "  the study (a learned model on a real AGX Orin): mean 13.11%%, most 26.73%%\n",
      orin_saving["search"].size(), sm * 100, sx * 100, lm * 100, lx * 100);
  if (!write.empty()) {
    util::write_json_file(write, all.to_json());
    std::printf("\nselector trained on %zu runs written to %s\n", runs.size(), write.c_str());
  }
  return 0;
}
