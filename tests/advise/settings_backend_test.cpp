#include "powershape/advise/settings_backend.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "advise/fake_target.hpp"
#include "powershape/experiment/engine.hpp"
#include "powershape/util/error.hpp"

namespace powershape::advise {
namespace {
namespace fs = std::filesystem;

// Configuration 1 runs at the cap in force: 1980 MHz / cap slower, energy by cap / 1980.
class CapBound : public experiment::Backend {
 public:
  explicit CapBound(const FakeTarget& t) : t_(t) {}
  std::string describe() const override { return "cap-bound"; }
  bool simulated() const override { return true; }
  nlohmann::json device_json() const override { return {{"fake", true}}; }
  workload::Rates peak_rates() const override { return {1e15, 1e12}; }
  void set_configs(std::vector<workload::Plan>) override {}
  std::size_t config_count() const override { return 2; }
  std::string config_name(std::size_t i) const override { return "c" + std::to_string(i); }
  experiment::Measurement measure(std::size_t i, double seconds) override {
    EXPECT_EQ(i, 1u);
    const double mhz = t_.cap > 0 ? t_.cap : 1980;
    experiment::Measurement m;
    m.config = i;
    m.seconds = seconds;
    m.iterations = 10;
    m.ms_per_iteration = 10 * 1980 / mhz * (1 + 0.001 * (++calls % 3));
    m.energy_j = m.iterations * 5 * mhz / 1980;
    m.sm_clock_mhz = mhz;
    m.avg_power_w = 500;
    return m;
  }
  void idle(double) override {}
  std::optional<double> temperature_c() override { return 50; }
  int64_t now_ns() const override { return 0; }
  trace::Trace recorded() override { return {}; }
  int calls = 0;

 private:
  const FakeTarget& t_;
};

}  // namespace

TEST(SettingsBackend, EachSettingHoldsForItsOwnRunsAndTheDesignComparesThem) {
  const fs::path dir = fs::temp_directory_path() / ("ps_settings_" + std::to_string(getpid()));
  FakeTarget target;
  CapBound inner(target);
  SettingsBackend b(inner, 1, target, {Setting{}, Setting{1320, 0}, Setting{990, 0}}, dir.string());
  EXPECT_EQ(b.config_count(), 3u);
  EXPECT_EQ(b.config_name(1), "clock cap 1320 MHz");
  experiment::Design d;
  d.rounds = 4;
  d.warmup_max_s = 1e-9;  // one run as found first
  const auto r = experiment::run_design(b, d);
  EXPECT_EQ(inner.calls, 1 + 4 * 3);
  EXPECT_EQ(target.sets, 2 * 4);   // the capped settings' runs alone; "as found" sets nothing
  EXPECT_EQ(target.cap, 0);        // put back after every run
  EXPECT_TRUE(fs::is_empty(dir));  // and no restore record left
  ASSERT_EQ(r.configs.size(), 3u);
  EXPECT_NEAR(r.configs[1].time_ratio.mid, 1.5, 0.01);
  EXPECT_NEAR(r.configs[2].time_ratio.mid, 2.0, 0.01);
  EXPECT_NEAR(r.configs[2].energy_ratio.mid, 0.5, 0.01);
  EXPECT_EQ(r.configs[2].time_verdict, "slower");
  EXPECT_EQ(r.best_energy, 2u);
  for (const auto& m : r.measurements) EXPECT_LT(m.config, 3u);
  fs::remove_all(dir);
}

TEST(SettingsBackend, NoSettingsOrNoSuchConfigurationIsRefused) {
  FakeTarget target;
  CapBound inner(target);
  EXPECT_THROW(SettingsBackend(inner, 1, target, {}, "/tmp"), powershape::Error);
  EXPECT_THROW(SettingsBackend(inner, 2, target, {Setting{}}, "/tmp"), powershape::Error);
  SettingsBackend b(inner, 1, target, {Setting{}}, "/tmp");
  EXPECT_THROW(b.set_configs({}), powershape::Error);
}

}  // namespace powershape::advise
