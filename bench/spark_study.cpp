// Which DGX Spark behaviour would make chunking the LM head pay what the chunking paper measured?
// Runs the paper's two configurations on the simulated Spark, one piece against chunks, with each
// mechanism the model can express (sim/profile.hpp: the spike loop, the thermal slowdown, the fan,
// the supply's ceiling) swept across the values the public reports allow, and prints the chunk
// gain each gives, which values land on the paper's figures, and what those values say against
// the owners' reports (REFERENCE.md). Also the L40S with its own limits, against the paper's 1-2%.
// Nothing here is a measurement of a Spark: it says what the paper's numbers imply.
//   spark_study [--quick] [--seconds S] [--json FILE]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "powershape/sim/simulator.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/finetune.hpp"

namespace ps = powershape;
using ps::sim::Profile;

namespace {

// The paper's figures (REFERENCE.md; the chunking paper on a DGX Spark and an L40S).
constexpr double kTrainingGain = 0.20;    // 20 min 45 s -> 16 min 30 s
constexpr double kTrainingEnergy = 0.14;  // 57 -> 49 Wh
constexpr double kKernelGainLo = 0.15, kKernelGainHi = 0.22;
constexpr double kL40sGainLo = 0.01, kL40sGainHi = 0.02;
// What counts as landing on a figure: the training gain within 5 points of 20%.
constexpr double kTolerance = 0.05;
// The paper's 57 Wh over 20 min 45 s is 165 W on average: the box's draw, not the GPU's (~100 W
// sustained), so the box's energy counts the rest at 65 W where a profile has no supply section.
constexpr double kImpliedRestW = 65;

// The training configuration: Qwen2-0.5B fine-tuned, a micro-batch of 64 sequences whose LM head
// runs in one piece against in chunks of 16 sequences (4 chunks). The sequence length is not in
// the paper's summary: 1024 assumed.
ps::workload::Plan training(int chunks) {
  ps::workload::Finetune f = ps::workload::parse_finetune("finetune:qwen2-0.5b", "65536,1024,16");
  f.lm_head_chunks = chunks;
  return ps::workload::finetune_plan(f);
}

// The kernel benchmark: matmul-softmax-matmul (the paper's minimal reproduction), at the shape
// repro uses by default.
ps::workload::Plan kernel(int chunks) {
  return ps::workload::msm_plan(ps::workload::Msm{65536, 512, 65536}, chunks);
}

struct Run {
  double s_per_iter = 0, j_per_iter = 0, box_j_per_iter = 0, peak_c = 0, mean_mhz = 0;
};

// Warms the device with the workload until its heat sink settles (four sink time constants, at
// most `warm_s`), then measures `seconds` of it.
Run measure(const Profile& p, const ps::workload::Plan& plan, double seconds, double warm_s) {
  ps::sim::DeviceOptions o;
  o.step_s = 1e-3;
  o.sensor_noise = 0;
  ps::sim::SimDevice dev(p, o);
  dev.run(plan, 0, std::min(warm_s, 4 * p.tau_sink_s));
  const ps::sim::RunRecord r = dev.run(plan, 0, seconds);
  Run out;
  const double s = static_cast<double>(r.end_ns - r.begin_ns) * 1e-9;
  out.s_per_iter = s / r.iterations;
  out.j_per_iter = r.energy_j / r.iterations;
  const double rest_w = p.supply_limit_w > 0 ? p.supply_rest_w : kImpliedRestW;
  out.box_j_per_iter = (r.energy_j + rest_w * s) / r.iterations;
  out.mean_mhz = r.mean_clock_mhz;
  double peak = 0;
  for (const auto& row : dev.trace().samples) {
    const auto& t = row[ps::telemetry::Signal::kGpuTemp];
    if (t.ok() && row.t_ns >= r.begin_ns) peak = std::max(peak, static_cast<double>(t.value));
  }
  out.peak_c = peak;
  return out;
}

struct Gain {
  double time = 0, energy = 0, box_energy = 0;  // 1 - chunked / one piece
  Run one, chunked;
};

Gain gain(const Profile& p, const std::function<ps::workload::Plan(int)>& plan, int chunks,
          double seconds, double warm_s) {
  Gain g;
  g.one = measure(p, plan(1), seconds, warm_s);
  g.chunked = measure(p, plan(chunks), seconds, warm_s);
  g.time = 1 - g.chunked.s_per_iter / g.one.s_per_iter;
  g.energy = 1 - g.chunked.j_per_iter / g.one.j_per_iter;
  g.box_energy = 1 - g.chunked.box_j_per_iter / g.one.box_j_per_iter;
  return g;
}

// One point of the sweep: a mechanism's figures set on the profile.
struct Variant {
  std::string mechanism;
  std::vector<std::pair<std::string, double>> values;
  Profile profile;
  Gain training, kernel;  // what the runs measured
};

// The profile as shipped, then each mechanism alone, swept over the ranges the reports allow:
// limits relative to the device's own (its power limit, the die at that power held), the 240 W
// brick and the fan only for the Spark (the L40S is passively cooled and fed by its server).
std::vector<Variant> variants(const Profile& shipped, bool spark, bool quick) {
  std::vector<Variant> out;
  out.push_back({"the shipped profile", {}, shipped, {}, {}});
  Profile base = shipped;  // each mechanism swept alone on the profile without any
  base.spike_gain_mhz_per_w_s = 0;
  base.slowdown_c = 0;
  base.fan_tau_s = 0;
  base.supply_limit_w = 0;
  base.supply_rest_w = 0;
  out.push_back({"none", {}, base, {}, {}});
  using L = std::vector<double>;
  auto pick = [&](const L& all, const L& few) { return quick ? few : all; };
  const double limit = base.power_limit_w;
  const double hot =
      std::round(base.ambient_c + limit * (base.r_die_c_per_w + base.r_sink_c_per_w));
  // An asymmetric loop: a fast drop on a short window's excess, a slow recovery.
  for (double w : pick({30, 100, 300, 1000}, {300}))
    for (double over : pick({1.02, 1.1, 1.25}, {1.02}))
      for (double rec : pick({3, 10, 30, 100, 1000}, {3, 1000})) {
        Profile p = base;
        p.spike_window_ms = w;
        p.spike_limit_w = std::round(limit * over);
        p.spike_gain_mhz_per_w_s = 100;
        p.spike_recovery_mhz_per_s = rec;
        out.push_back({"spike loop",
                       {{"window_ms", w}, {"limit_w", p.spike_limit_w}, {"recovery_mhz_s", rec}},
                       p,
                       {},
                       {}});
      }
  // A thermal slowdown with hysteresis; the die's own time constant decides how much a long
  // product heats it more than a chunk's (the paper: spikes ~10 C lower with chunks).
  for (double tau : pick({0.05, 0.5, 2, 5}, {2}))
    for (double at : pick({hot - 4, hot, hot + 4}, {hot - 4}))
      for (double hys : pick({2, 5, 10, 20}, {20}))
        for (double step : pick({150, 300, 600, 1200}, {300})) {
          Profile p = base;
          p.tau_die_s = tau;
          p.thermal_gain_mhz_per_c_s = 0;  // the staircase instead of the smooth loop
          p.slowdown_c = at;
          p.slowdown_hysteresis_c = hys;
          p.slowdown_step_mhz = step;
          p.slowdown_interval_ms = 100;
          out.push_back(
              {"thermal slowdown",
               {{"tau_die_s", tau}, {"slowdown_c", at}, {"hysteresis_c", hys}, {"step_mhz", step}},
               p,
               {},
               {}});
        }
  if (!spark) return out;
  // The fan: a lagging curve over a sink that cools half as well at its slowest, with a
  // slowdown at the die's steady temperature.
  for (double tau : pick({2, 10, 30}, {10}))
    for (double hys : pick({2, 5, 10}, {5})) {
      Profile p = base;
      p.tau_die_s = 0.5;
      p.thermal_gain_mhz_per_c_s = 0;
      p.slowdown_c = hot;
      p.slowdown_hysteresis_c = 5;
      p.slowdown_step_mhz = 300;
      p.slowdown_interval_ms = 100;
      p.fan_min_pct = 30;
      p.fan_start_c = 60;
      p.fan_full_c = 85;
      p.fan_hysteresis_c = hys;
      p.fan_tau_s = tau;
      p.fan_r_sink_at_min_c_per_w = 2 * p.r_sink_c_per_w;
      out.push_back(
          {"fan (and a slowdown)", {{"fan_tau_s", tau}, {"fan_hysteresis_c", hys}}, p, {}, {}});
    }
  // The 240 W brick: the rest of the box's draw, how long an excess it tolerates, how long its
  // protection then holds the clock at 700 MHz (owners saw 500-850).
  for (double rest : pick({100, 120, 140, 160}, {140}))
    for (double win : pick({10, 100, 300, 1000}, {300}))
      for (double hold : pick({0.5, 2, 5, 20}, {5})) {
        Profile p = base;
        p.supply_limit_w = 240;
        p.supply_rest_w = rest;
        p.supply_window_ms = win;
        p.supply_degraded_mhz = 700;
        p.supply_hold_s = hold;
        out.push_back(
            {"240 W supply", {{"rest_w", rest}, {"window_ms", win}, {"hold_s", hold}}, p, {}, {}});
      }
  return out;
}

std::string describe(const Variant& v) {
  std::string s;
  for (const auto& [k, x] : v.values) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %g", s.empty() ? "" : ", ", k.c_str(), x);
    s += buf;
  }
  return s.empty() ? "-" : s;
}

// Runs every variant, prints its row, and returns them measured.
std::vector<Variant> sweep(std::vector<Variant> vs, double seconds, double warm_s) {
  std::printf(
      "| mechanism | values | training time | GPU energy | box energy | die one piece / chunked | "
      "clock MHz | msm time | msm energy |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- "
      "|\n");
  for (Variant& v : vs) {
    v.training = gain(v.profile, training, 4, seconds, warm_s);
    v.kernel = gain(v.profile, kernel, 4, seconds, warm_s);
    const Gain& t = v.training;
    std::printf(
        "| %s | %s | %+.1f%% | %+.1f%% | %+.1f%% | %.0f / %.0f C | %.0f / %.0f | %+.1f%% | "
        "%+.1f%% |\n",
        v.mechanism.c_str(), describe(v).c_str(), t.time * 100, t.energy * 100, t.box_energy * 100,
        t.one.peak_c, t.chunked.peak_c, t.one.mean_mhz, t.chunked.mean_mhz, v.kernel.time * 100,
        v.kernel.energy * 100);
    std::fflush(stdout);
  }
  return vs;
}

// Which variants' gain (training's or the kernel's) lands in [lo, hi], with each value's range
// among them per mechanism: what the paper's figure implies.
void landed(const std::vector<Variant>& vs, const char* what, bool kernel_gain, double lo,
            double hi) {
  std::printf("%s %.0f-%.0f%%:\n", what, lo * 100, hi * 100);
  std::map<std::string, std::vector<const Variant*>> by;
  const Variant* nearest = nullptr;
  auto g = [&](const Variant& v) { return kernel_gain ? v.kernel.time : v.training.time; };
  for (const Variant& v : vs) {
    if (g(v) >= lo && g(v) <= hi) by[v.mechanism].push_back(&v);
    if (nearest == nullptr ||
        std::abs(g(v) - (lo + hi) / 2) < std::abs(g(*nearest) - (lo + hi) / 2))
      nearest = &v;
  }
  if (by.empty())
    std::printf("- nothing swept; the nearest: %s (%s) %+.1f%%\n", nearest->mechanism.c_str(),
                describe(*nearest).c_str(), g(*nearest) * 100);
  for (const auto& [mech, list] : by) {
    std::printf("- %s (%zu of its variants):", mech.c_str(), list.size());
    for (std::size_t i = 0; i < list.front()->values.size(); ++i) {
      double a = 1e300, b = -1e300;
      for (const Variant* v : list) {
        a = std::min(a, v->values[i].second);
        b = std::max(b, v->values[i].second);
      }
      std::printf(" %s %g..%g;", list.front()->values[i].first.c_str(), a, b);
    }
    std::printf(" box energy saved");
    for (const Variant* v : list) std::printf(" %+.1f%%", v->training.box_energy * 100);
    std::printf("\n");
  }
}

nlohmann::json to_json(const std::string& device, const Variant& v) {
  nlohmann::json j = {{"device", device},
                      {"mechanism", v.mechanism},
                      {"training_gain", v.training.time},
                      {"training_energy_saving", v.training.energy},
                      {"training_box_energy_saving", v.training.box_energy},
                      {"die_peak_c", {v.training.one.peak_c, v.training.chunked.peak_c}},
                      {"msm_gain", v.kernel.time},
                      {"msm_energy_saving", v.kernel.energy}};
  for (const auto& [key, x] : v.values) j["values"][key] = x;
  return j;
}

// The die held at a steady power on the profile's network.
double steady_die_c(const Profile& p, double w) {
  return p.ambient_c + w * (p.r_die_c_per_w + p.r_sink_c_per_w);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"What the chunking paper's DGX Spark figures imply for the Spark model"};
  bool quick = false;
  double seconds = 600, warm_s = 60;
  std::string json_path;
  app.add_flag("--quick", quick, "A few variants and short runs (a test's)");
  app.add_option(
         "--seconds", seconds,
         "Simulated seconds measured a run (default 600: the paper's runs took 16-21 minutes)")
      ->check(CLI::Range(1.0, 3600.0));
  app.add_option("--json", json_path, "Also write every variant's figures here");
  CLI11_PARSE(app, argc, argv);
  if (quick) {
    seconds = std::min(seconds, 20.0);
    warm_s = 20;
  }
  const Profile spark = ps::sim::load_profile("dgx-spark");
  std::printf(
      "the paper on a DGX Spark: training %.0f%% faster, %.0f%% less energy (4 chunks of 16 "
      "sequences against 64 at once); matmul-softmax-matmul %.0f-%.0f%% faster\n",
      kTrainingGain * 100, kTrainingEnergy * 100, kKernelGainLo * 100, kKernelGainHi * 100);
  std::printf(
      "simulated (%g s a run after a warm-up), gain = 1 - chunked / one piece; the box's "
      "energy counts the rest of it at 65 W (where no supply section says otherwise)\n\n",
      seconds);
  const auto sv = sweep(variants(spark, true, quick), seconds, warm_s);
  std::printf("\nwhat lands on the paper's Spark figures:\n");
  landed(sv, "training, within 5 points of", false, kTrainingGain - kTolerance,
         kTrainingGain + kTolerance);
  landed(sv, "matmul-softmax-matmul,", true, kKernelGainLo, kKernelGainHi);
  std::printf(
      "the owners' reports against the model: the die at a steady 100 W %.0f C (reports: "
      "82-92 C with fans at full speed), at 80 W %.0f C (a report: SW thermal slowdown "
      "accumulated at ~80 W)\n",
      steady_die_c(spark, 100), steady_die_c(spark, 80));

  // The L40S with its own published limits (350 W, passive cooling, 2,520 MHz), the same model
  // class: the paper's 1-2% there.
  const Profile l40s = ps::sim::load_profile("l40s");
  std::printf(
      "\nthe paper on an L40S: %.0f-%.0f%% faster; the same sweep on profiles/l40s.json:\n\n",
      kL40sGainLo * 100, kL40sGainHi * 100);
  const auto lv = sweep(variants(l40s, false, quick), seconds, warm_s);
  std::printf("\nwhat lands on the paper's L40S figure:\n");
  landed(lv, "training,", false, kL40sGainLo, kL40sGainHi);
  if (!json_path.empty()) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& v : sv) all.push_back(to_json("dgx-spark", v));
    for (const auto& v : lv) all.push_back(to_json("l40s", v));
    std::ofstream(json_path) << all.dump(1) << "\n";
  }
  return 0;
}
