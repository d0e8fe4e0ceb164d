#include "powershape/sim/profile.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "error_of.hpp"
#include "powershape/workload/steps.hpp"

namespace powershape::sim {

TEST(Profile, EveryShippedProfileLoadsAndNamesItsSources) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(profiles_dir())) {
    Profile p = load_profile(e.path().string());
    EXPECT_FALSE(p.sources.empty()) << p.name;
    EXPECT_EQ(e.path().stem().string(), p.name);
    ++n;
  }
  EXPECT_GE(n, 5);
  EXPECT_EQ(load_profile("h200").status, "calibrated");
  EXPECT_EQ(load_profile("dgx-spark").status, "estimated");
}

// A folder of recordings named like a profile (h200/...) beside the user does not shadow it; a
// file named by a path is read.
TEST(Profile, AShippedNameIsNotShadowedByTheWorkingFolder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ps_profile_" + std::to_string(::getpid()));
  fs::create_directories(dir / "h200");
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  EXPECT_EQ(load_profile("h200").name, "h200");
  auto j = to_json(load_profile("h200"));
  j["name"] = "mine";
  std::ofstream(dir / "mine.json") << j.dump();
  EXPECT_EQ(load_profile("./mine.json").name, "mine");
  EXPECT_EQ(load_profile("mine.json").name, "mine");
  EXPECT_THROW(load_profile("h200/"), std::runtime_error);  // a folder is no profile
  fs::current_path(before);
  fs::remove_all(dir);
}

TEST(Profile, AMissingOrOutOfRangeFieldIsNamed) {
  nlohmann::json j = to_json(load_profile("h200"));
  auto error_of = [](const nlohmann::json& x) {
    return testing::error_of([&] { profile_from_json(x); });
  };
  auto a = j;
  a["governor"].erase("window_ms");
  EXPECT_EQ(error_of(a), "governor.window_ms: missing");
  auto b = j;
  b["memory"]["clock_sensitivity"] = 2;
  EXPECT_EQ(error_of(b).rfind("memory.clock_sensitivity: 2.000000 is out of range", 0), 0u);
  auto c = j;
  c.erase("sources");
  EXPECT_EQ(error_of(c).rfind("sources:", 0), 0u);
  auto d = j;
  d["clocks"]["vf_table"] = {{1000, 0.8}, {900, 0.9}};
  EXPECT_EQ(error_of(d), "clocks.vf_table: MHz must ascend");
  auto e = j;
  e["clocks"]["vf_table"] = {{1000, 0.9}, {1500, 0.8}};
  EXPECT_EQ(error_of(e), "clocks.vf_table: volts must not fall as the clock rises");
  auto f = j;
  f["power"]["leakage_per_c"] = 0.5;  // 40 W x 0.5 / C x 0.04 C/W = 0.8
  EXPECT_EQ(error_of(f).rfind("power.leakage_per_c: leakage_w x leakage_per_c", 0), 0u)
      << error_of(f);
  auto g = j;
  g["sources"] = {1, 2};
  EXPECT_EQ(error_of(g), "sources: expected strings naming where the figures come from");
  auto h = j;
  h["power_modes"] = {7};
  EXPECT_EQ(error_of(h).rfind("power_modes: expected objects", 0), 0u);
  auto m = j;  // the medium loop comes with both of its figures or not at all
  m["governor"]["medium_gain_mhz_per_w_s"] = 100;
  m["governor"].erase("medium_window_ms");
  EXPECT_EQ(error_of(m), "governor.medium_window_ms: missing");
  auto r = j;
  r["accuracy"]["chunk_ratio_points"] = -1;
  EXPECT_EQ(error_of(r).rfind("accuracy.chunk_ratio_points: -1.000000 is out of range", 0), 0u)
      << error_of(r);
  auto k = j;  // a misspelt kernel is refused, not left to run at a copy's bandwidth
  k["kernels"]["memory_efficiency"]["crossentropy"] = 0.9;
  EXPECT_EQ(error_of(k).rfind("kernels.memory_efficiency.crossentropy: no memory kernel of that "
                              "name (",
                              0),
            0u)
      << error_of(k);
  EXPECT_NE(error_of(k).find(" cross_entropy,"), std::string::npos) << error_of(k);
  EXPECT_EQ(error_of(j), "no error");
}

TEST(Profile, EveryMemoryKernelOfTheBuiltInWorkloadsMayBeGivenAnEfficiency) {
  const auto& names = workload::memory_kernel_names();
  for (const char* n : {"count_valid", "cross_entropy", "ce_finish", "scale_x", "dbias", "scale_dx",
                        "reduce", "softmax", "gap", "elementwise", "elementwise_bwd", "optimizer"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  for (const char* n : {"logits", "dw", "dx", "qk", "pv", "burst"})  // products: not memory
    EXPECT_EQ(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(Profile, PowerModesSetTheLimitAndClock) {
  Profile p = load_profile("jetson-agx-orin");
  p.medium_window_ms = 20;  // a medium loop 10% over the limit keeps its share in a mode
  p.medium_gain_mhz_per_w_s = 50;
  p.medium_limit_w = 1.1 * p.power_limit_w;
  apply_power_mode(p, "15W");
  EXPECT_EQ(p.power_limit_w, 15);
  EXPECT_NEAR(p.medium_limit_w, 16.5, 1e-9);
  EXPECT_EQ(p.mode_max_mhz, 420);
  EXPECT_EQ(p.max_mhz, 1301);  // the chip's V/f curve is the same in every mode
  EXPECT_GE(p.fast_limit_w, p.power_limit_w);
  EXPECT_THROW(apply_power_mode(p, "99W"), std::runtime_error);
  EXPECT_THROW(load_profile("no-such-gpu"), std::runtime_error);
}

TEST(Profile, VoltageInterpolatesTheTable) {
  Profile p = load_profile("h200");
  EXPECT_DOUBLE_EQ(p.volts(1980), 1.0);
  EXPECT_NEAR(p.volts(1550), 0.85, 1e-9);
  EXPECT_DOUBLE_EQ(p.volts(100), p.vf_table.front().second);
}

TEST(Profile, TheMediumLoopAndKernelFiguresSurviveARoundTrip) {
  Profile p = load_profile("l40s");
  p.medium_window_ms = 20;
  p.medium_gain_mhz_per_w_s = 100;
  p.medium_limit_w = p.power_limit_w + 10;
  p.epilogue_efficiency = 0.8;  // and the kernel model's optional figures
  p.wave_quantization = 0.5;
  p.issue_activity = 0.25;
  p.l2_row_bytes = 65536;
  p.epilogue_k = 300;
  p.reread_flops = 7e10;
  p.reread_span = 700;
  p.chunk_ratio_points = 1.5;
  const Profile q = profile_from_json(to_json(p));
  EXPECT_EQ(q.chunk_ratio_points, 1.5);
  EXPECT_FALSE(to_json(load_profile("l40s")).contains("accuracy"));  // not measured: not written
  EXPECT_EQ(q.l2_row_bytes, 65536);
  EXPECT_EQ(q.reread_flops, 7e10);
  EXPECT_EQ(q.reread_span, 700);
  EXPECT_EQ(q.epilogue_efficiency, 0.8);
  EXPECT_EQ(q.wave_quantization, 0.5);
  EXPECT_EQ(q.issue_activity, 0.25);
  EXPECT_EQ(q.medium_window_ms, 20);
  EXPECT_EQ(q.medium_gain_mhz_per_w_s, 100);
  EXPECT_EQ(q.medium_limit_w, p.power_limit_w + 10);
  auto j = to_json(p);  // under the slow loop's limit: the slow loop would never act
  j["governor"]["medium_limit_w"] = p.power_limit_w - 1;
  EXPECT_EQ(testing::error_of([&] { profile_from_json(j); }).rfind("governor.medium_limit_w:", 0),
            0u);
  p.medium_gain_mhz_per_w_s = 0;  // none: not written
  EXPECT_FALSE(to_json(p)["governor"].contains("medium_window_ms"));
}

TEST(Profile, EachMechanismComesWholeOrNotAtAllAndSurvivesARoundTrip) {
  nlohmann::json j = to_json(load_profile("h200"));
  auto error_of = [](const nlohmann::json& x) {
    return testing::error_of([&] { profile_from_json(x); });
  };
  auto a = j;
  a["governor"]["spike_gain_mhz_per_w_s"] = 100;
  EXPECT_EQ(error_of(a), "governor.spike_window_ms: missing");
  auto b = j;
  b["fan"] = {{"min_pct", 20},     {"start_c", 60}, {"full_c", 50},
              {"hysteresis_c", 3}, {"tau_s", 4},    {"r_sink_at_min_c_per_w", 0.2}};
  EXPECT_EQ(error_of(b), "fan.full_c: must be above fan.start_c");
  b["fan"]["full_c"] = 80;
  b["fan"]["r_sink_at_min_c_per_w"] = 0.001;
  EXPECT_EQ(error_of(b).rfind("fan.r_sink_at_min_c_per_w: a slower fan cools less", 0), 0u);
  auto c = j;
  c["supply"] = {
      {"limit_w", 240}, {"rest_w", 250}, {"window_ms", 5}, {"degraded_mhz", 700}, {"hold_s", 2}};
  EXPECT_EQ(error_of(c), "supply.rest_w: must be below supply.limit_w");
  auto d = j;
  d["thermal"]["slowdown_c"] = 85;
  EXPECT_EQ(error_of(d), "thermal.slowdown_hysteresis_c: missing");

  Profile p = load_profile("h200");
  EXPECT_EQ(p.spike_gain_mhz_per_w_s + p.slowdown_c + p.fan_tau_s + p.supply_limit_w, 0);
  p.spike_window_ms = 20;
  p.spike_limit_w = p.power_limit_w + 10;
  p.spike_gain_mhz_per_w_s = 200;
  p.spike_recovery_mhz_per_s = 30;
  p.slowdown_c = 85;
  p.slowdown_hysteresis_c = 4;
  p.slowdown_step_mhz = 105;
  p.slowdown_interval_ms = 250;
  p.fan_min_pct = 30;
  p.fan_start_c = 50;
  p.fan_full_c = 85;
  p.fan_hysteresis_c = 3;
  p.fan_tau_s = 4;
  p.fan_r_sink_at_min_c_per_w = p.r_sink_c_per_w * 2;
  p.supply_limit_w = 900;
  p.supply_rest_w = 100;
  p.supply_window_ms = 5;
  p.supply_degraded_mhz = 700;
  p.supply_hold_s = 2;
  const Profile q = profile_from_json(to_json(p));
  EXPECT_EQ(to_json(q), to_json(p));
  EXPECT_EQ(q.spike_recovery_mhz_per_s, 30);
  EXPECT_EQ(q.slowdown_step_mhz, 105);
  EXPECT_EQ(q.fan_tau_s, 4);
  EXPECT_EQ(q.supply_hold_s, 2);
}

// A GPU the recording gives no limit of takes its profile's, found by its name or, for a replay,
// by the recording's path; a GPU with its own limit, or no profile, takes none.
TEST(Profile, ARecordingWithoutLimitsTakesItsProfilesByNameOrPath) {
  trace::Trace t;
  t.devices.resize(3);
  t.devices[0].name = "NVIDIA H200";
  t.devices[1].name = "NVIDIA L40S";
  t.devices[1].power_limit_mw = telemetry::Reading::of(300'000);
  t.devices[2].name = "a card no profile is of";
  auto limits = profile_limits(t);
  ASSERT_EQ(limits.size(), 1u);
  EXPECT_EQ(limits.at("NVIDIA H200").second, "h200");
  EXPECT_DOUBLE_EQ(limits.at("NVIDIA H200").first, load_profile("h200").power_limit_w);
  t.source = "fake:l40s/gemm_sustained";
  limits = profile_limits(t);
  EXPECT_EQ(limits.at("a card no profile is of").second, "l40s");
}

}  // namespace powershape::sim
