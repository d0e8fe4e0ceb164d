#include "powershape/analysis/power_input.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "error_of.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/csv_writer.hpp"

namespace powershape::analysis {
namespace {

using testing::error_of;

class PowerInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ps_power_input_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  // One GPU with a 1 Hz square wave (its regions named "step", from 5 s to 15 s) between 100 and
  // 700 W read every 10 ms for 20 s, its wall clock `wall_s` at its first reading (0: none), its
  // limit 700 W.
  std::string node(const std::string& name, int64_t wall_s, double phase_s) {
    trace::Trace t;
    t.source = "test";
    telemetry::DeviceInfo d;
    d.name = "NVIDIA H200";
    d.power_limit_mw = telemetry::Reading::of(700000);
    t.devices.push_back(d);
    t.wall_minus_steady_ns = wall_s * 1'000'000'000;
    for (int i = 0; i <= 2000; ++i) {
      trace::Sample s;
      s.t_ns = int64_t{i} * 10'000'000;
      s[telemetry::Signal::kPowerInstant] =
          telemetry::Reading::of(std::fmod(i * 0.01 + phase_s, 1.0) < 0.5 ? 700000 : 100000);
      t.samples.push_back(s);
    }
    t.regions.push_back({"step", 0, 5'000'000'000, 10'000'000'000});
    t.regions.push_back({"step", 0, 10'000'000'000, 15'000'000'000});
    const auto p = (dir_ / name).string();
    trace::write_csv(p, t, true);
    return p;
  }
  std::filesystem::path dir_;
};

}  // namespace

TEST_F(PowerInputTest, OneTraceItsLimitAndItsResolution) {
  const PowerInput in = read_power_inputs({node("a.csv", 1'700'000'000, 0)}, 0);
  EXPECT_EQ(in.gpus, 1);
  EXPECT_EQ(in.signal, "power_instant");
  EXPECT_NEAR(in.rated_w, 700, 1e-9);
  EXPECT_NEAR(in.power.dt_s, 0.01, 1e-9);
  EXPECT_NEAR(in.power.t0_s, 0, 1e-9);
  EXPECT_NEAR(in.power.w[0], 700, 1e-6);
  EXPECT_NEAR(in.power.w[60], 100, 1e-6);
}

// A second GPU read once is no series: its power and its limit stay out.
TEST_F(PowerInputTest, AGpuReadOnceNeitherAddsPowerNorCounts) {
  trace::Trace t = trace::read_csv(node("a.csv", 0, 0));
  telemetry::DeviceInfo d = t.devices[0];
  d.index = 1;
  t.devices.push_back(d);
  trace::Sample once;
  once.gpu = 1;
  once.t_ns = 1'000'000'000;
  once[telemetry::Signal::kPowerInstant] = telemetry::Reading::of(500000);
  t.samples.insert(t.samples.begin() + 100, once);
  const PowerInput in = trace_power(t, t.samples.front().t_ns, t.samples.back().t_ns, 0);
  EXPECT_EQ(in.gpus, 1);
  EXPECT_NEAR(in.rated_w, 700, 1e-9);
  EXPECT_NEAR(in.power.w[0], 700, 1e-6);
}

TEST_F(PowerInputTest, TwoNodesOutOfPhaseOnTheWallClockCancel) {
  // Two nodes in step add to 1400 W at the top; half a period apart on the wall clock they add
  // to a flat 800 W.
  const auto a = node("a.csv", 1'700'000'000, 0);
  const auto b = node("b.csv", 1'700'000'000, 0);
  const PowerInput in_phase = read_power_inputs({a, b}, 0.01);
  EXPECT_NEAR(in_phase.power.w[10], 1400, 1e-6);
  const auto shifted = node("c.csv", 1'700'000'000, 0.5);
  const PowerInput cancel = read_power_inputs({a, shifted}, 0.01);
  EXPECT_EQ(cancel.gpus, 2);
  EXPECT_NEAR(cancel.rated_w, 1400, 1e-9);
  EXPECT_FALSE(cancel.aligned_by_start);
  double lo = 1e9, hi = 0;
  for (double w : cancel.power.w) {
    lo = std::min(lo, w);
    hi = std::max(hi, w);
  }
  EXPECT_NEAR(lo, 800, 1e-6);
  EXPECT_NEAR(hi, 800, 1e-6);
}

TEST_F(PowerInputTest, NodesApartOnTheWallClockOverlapOnlyWhereBothRecorded) {
  // b starts 5 s after a: 15 s in common.
  const PowerInput in =
      read_power_inputs({node("a.csv", 1'700'000'000, 0), node("b.csv", 1'700'000'005, 0)}, 0);
  EXPECT_NEAR(in.power.t0_s, 5, 1e-6);
  EXPECT_NEAR(in.power.duration_s(), 15, 0.02);
}

TEST_F(PowerInputTest, WithoutAWallClockNodesLineUpAtTheirStarts) {
  const PowerInput in = read_power_inputs({node("a.csv", 0, 0), node("b.csv", 0, 0.5)}, 0.01);
  EXPECT_TRUE(in.aligned_by_start);
  EXPECT_NEAR(in.power.w[10], 800, 1e-6);
}

TEST_F(PowerInputTest, ARegionKeepsTheJobsSteps) {
  const auto a = node("a.csv", 1'700'000'000, 0);
  const PowerInput in = read_power_inputs({a}, 0, "step");
  EXPECT_NEAR(in.power.duration_s(), 10, 0.02);
  EXPECT_NEAR(in.power.t0_s, 5, 1e-6);
  // The regions on the power's clock, whatever the wall clock (or none: lined up at the start).
  for (const auto& path : {a, node("b.csv", 0, 0)}) {
    const PowerInput r = read_power_inputs({path}, 0, "step");
    ASSERT_EQ(r.regions_s.size(), 2u);
    EXPECT_NEAR(r.regions_s[0].first, r.power.t0_s, 1e-6) << path;
    EXPECT_NEAR(r.regions_s[1].second, r.power.t0_s + 10, 1e-6) << path;
  }
  EXPECT_TRUE(read_power_inputs({a}, 0).regions_s.empty());
  EXPECT_NE(error_of([&] { read_power_inputs({a}, 0, "warmup"); }).find("no region named 'warmup'"),
            std::string::npos);
  const auto m = write("m.csv", "t_s,power_w\n0,1\n1,1\n2,1\n");
  EXPECT_NE(error_of([&] { read_power_inputs({m}, 0, "step"); }).find("has no regions"),
            std::string::npos);
}

TEST_F(PowerInputTest, PrometheusRangeQueriesAddTheirSeries) {
  const auto p = write("q.json", R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"0"},
     "values":[[1700000000,"600"],[1700000001,"NaN"],[1700000002,"200"],[1700000003,"600"]]},
    {"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","gpu":"1"},
     "values":[[1700000000,"100"],[1700000001,"100"],[1700000002,"100"],[1700000003,"100"]]}]}})");
  const PowerInput in = read_power_inputs({p}, 0);
  EXPECT_EQ(in.gpus, 2);
  EXPECT_EQ(in.signal, "DCGM_FI_DEV_POWER_USAGE");
  EXPECT_EQ(in.rated_w, 0);
  EXPECT_NEAR(in.power.dt_s, 1, 1e-9);
  ASSERT_EQ(in.power.w.size(), 3u);
  EXPECT_NEAR(in.power.w[0], 700, 1e-9);
  EXPECT_NEAR(in.power.w[1], 700, 1e-9);  // the gap holds the reading before it
  EXPECT_NEAR(in.power.w[2], 300, 1e-9);
}

// powershape_node_power_watts is a node's GPUs summed: its `gpus` label counts them.
TEST_F(PowerInputTest, ANodeSeriesCountsTheGpusItSums) {
  const auto p = write("n.json", R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"powershape_node_power_watts","Hostname":"a","gpus":"8"},
     "values":[[1700000000,"5600"],[1700000001,"800"],[1700000002,"5600"]]},
    {"metric":{"__name__":"powershape_node_power_watts","Hostname":"b","gpus":"4"},
     "values":[[1700000000,"2800"],[1700000001,"400"],[1700000002,"2800"]]}]}})");
  EXPECT_EQ(read_power_inputs({p}, 0).gpus, 12);
  const auto bad = write("b.json", R"({"data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"powershape_node_power_watts","gpus":"x8"},"values":[[1,"1"],[2,"1"]]}]}})");
  EXPECT_NE(error_of([&] { read_power_inputs({bad}, 0); }).find("label gpus='x8'"),
            std::string::npos);
}

TEST_F(PowerInputTest, AMetersCsvIsOneSource) {
  const PowerInput in =
      read_power_inputs({write("m.csv", "t_s,power_w\n0,5e7\n0.5,7e7\n1.0,5e7\n1.5,7e7\n")}, 0);
  EXPECT_EQ(in.gpus, 0);
  EXPECT_NEAR(in.power.w[0], 5e7, 1);
  EXPECT_NEAR(in.power.w[1], 7e7, 1);
}

TEST_F(PowerInputTest, BadFilesAreNamedWithWhatIsWrong) {
  EXPECT_NE(
      error_of([&] { read_power_inputs({(dir_ / "none.csv").string()}, 0); }).find("cannot read"),
      std::string::npos);
  const auto two = write("two.json", R"({"data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"a"},"values":[[1,"1"],[2,"1"]]},
    {"metric":{"__name__":"b"},"values":[[1,"1"],[2,"1"]]}]}})");
  EXPECT_NE(error_of([&] { read_power_inputs({two}, 0); }).find("two metrics, a and b"),
            std::string::npos);
  const auto vector = write("v.json", R"({"data":{"resultType":"vector","result":[]}})");
  EXPECT_NE(error_of([&] { read_power_inputs({vector}, 0); }).find("range query"),
            std::string::npos);
  const auto huge = write("h.csv", "t_s,power_w\n0,9.2e18\n1,1\n");
  EXPECT_NE(error_of([&] { read_power_inputs({huge}, 0); }).find("not a plausible reading"),
            std::string::npos);
  const auto back = write("b.csv", "t_s,power_w\n1,5\n0,5\n");
  EXPECT_NE(error_of([&] { read_power_inputs({back}, 0); }).find("line 3: times do not increase"),
            std::string::npos);
  const auto text = write("t.csv", "t_s,power_w\n0,abc\n");
  EXPECT_NE(error_of([&] { read_power_inputs({text}, 0); }).find("line 2"), std::string::npos);
  // A number with junk after it is no reading, in either column.
  for (const char* junk : {"t_s,power_w\n0,5\n1,5x\n", "t_s,power_w\n0,5\n1s,5\n"}) {
    const auto j = write("j.csv", junk);
    EXPECT_NE(error_of([&] { read_power_inputs({j}, 0); }).find("line 3"), std::string::npos)
        << junk;
  }
  const auto one = write("o.csv", "t_s,power_w\n0,5\n");
  EXPECT_NE(error_of([&] { read_power_inputs({one}, 0); }).find("o.csv"), std::string::npos);
  const auto nopower = write("np.csv", "t_s,sm_clock_mhz\n0,1980\n1,1980\n");
  EXPECT_NE(error_of([&] { read_power_inputs({nopower}, 0); }).find("no power readings"),
            std::string::npos);
}

}  // namespace powershape::analysis
