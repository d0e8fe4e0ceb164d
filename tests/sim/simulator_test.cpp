#include "powershape/sim/simulator.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "powershape/analysis/summary.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::sim {
namespace {

workload::Plan gemm(double flops = 2.0 * 4096 * 4096 * 4096) {
  workload::Plan p;
  workload::Phase ph;
  ph.flops = flops;
  p.phases.push_back(ph);
  return p;
}

double burst_tflops(const SimResult& r, const workload::Plan& plan) {
  return plan.phases[0].flops * r.run.iterations / r.run.clocks[0].ns * 1e-3;
}

}  // namespace

TEST(Simulator, IsDeterministicForASeed) {
  Profile p = load_profile("h200");
  SimOptions o;
  o.seconds = 1;
  auto a = simulate(p, gemm(), o), b = simulate(p, gemm(), o);
  EXPECT_EQ(a.trace, b.trace);
  o.seed = 2;
  EXPECT_NE(simulate(p, gemm(), o).trace, a.trace);
}

TEST(Simulator, ALongLoadIsHeldAtThePowerLimitAndShortBurstsKeepTheirClock) {
  Profile p = load_profile("h200");
  SimOptions o;
  o.seconds = 5;
  auto r = simulate(p, gemm(), o);
  auto s = analysis::summarize(r.trace, 0, "late", r.run.begin_ns + 2'000'000'000, r.run.end_ns);
  EXPECT_NEAR(*s.avg_power_w, p.power_limit_w, 0.03 * p.power_limit_w);
  EXPECT_GT(*s.power_capped_fraction(), 0.95);
  EXPECT_LT(s.sm_clock_mhz.mean, 1650);
  // The sensor's energy counter agrees with the model's own energy.
  auto w = analysis::summarize(r.trace, 0, "w", r.run.begin_ns, r.run.end_ns);
  EXPECT_NEAR(w.energy.energy_mj * 1e-3, r.run.energy_j, 0.01 * r.run.energy_j);

  auto square = workload::square_plan({10, 0.5, workload::Gap::kIdle}, {784e12, 1e12});
  auto q = simulate(p, square, o);
  EXPECT_GT(burst_tflops(q, square), burst_tflops(r, gemm()) * 1.08);
  auto qs = analysis::summarize(q.trace, 0, "w", q.run.begin_ns, q.run.end_ns);
  EXPECT_GT(qs.sm_clock_mhz.mean, 1900);  // NVML shows the boost clock: only the fast limiter acts
}

TEST(Simulator, AUserClockCapAndPowerLimitAreHonoured) {
  Profile p = load_profile("h200");
  SimOptions o;
  o.seconds = 3;
  o.clock_cap_mhz = 1200;
  auto r = simulate(p, gemm(), o);
  EXPECT_LE(r.run.mean_clock_mhz, 1200);
  o.clock_cap_mhz = 0;
  o.power_limit_w = 400;
  auto l = simulate(p, gemm(), o);
  auto s = analysis::summarize(l.trace, 0, "late", l.run.begin_ns + 1'500'000'000, l.run.end_ns);
  EXPECT_NEAR(*s.avg_power_w, 400, 15);
}

TEST(Simulator, AHotDieIsThrottledByTemperature) {
  Profile p = load_profile("h200");
  p.max_operating_c = 45;
  SimOptions o;
  o.seconds = 20;
  auto r = simulate(p, gemm(), o);
  auto s = analysis::summarize(r.trace, 0, "late", r.run.begin_ns + 10'000'000'000, r.run.end_ns);
  EXPECT_GT(*s.thermal_fraction(), 0.9);
  EXPECT_LE(*s.peak_temp_c, 47);
}

TEST(Simulator, MemoryPhasesRunAtTheBandwidth) {
  Profile p = load_profile("h200");
  workload::Plan plan;
  workload::Phase m;
  m.kind = workload::PhaseKind::kMemory;
  m.bytes = 4.3e9;  // 1 ms at 4.3 TB/s
  plan.phases.push_back(m);
  SimOptions o;
  o.iterations = 100;
  auto r = simulate(p, plan, o);
  EXPECT_NEAR(static_cast<double>(r.run.end_ns - r.run.begin_ns) * 1e-9, 0.1, 0.002);
  EXPECT_THROW(simulate(p, plan, SimOptions{}), powershape::Error);
}

// A row-by-row kernel's later passes come from L2 while its rows fit the device's l2_row_bytes,
// from memory again once they do not; a profile that does not say finds them in L2.
TEST(Simulator, RowsTooLongForL2AreReadFromMemoryAgain) {
  Profile p = load_profile("h200");
  p.l2_row_bytes = 100000;
  const auto seconds = [&](double row_bytes) {
    workload::Phase m;
    m.kind = workload::PhaseKind::kMemory;
    m.bytes = 4.3e9;
    m.reread_bytes = 4.3e9;
    m.row_bytes = row_bytes;
    return phase_seconds(p, m, p.max_mhz);
  };
  EXPECT_NEAR(seconds(65536), 1e-3, 2e-5);
  EXPECT_NEAR(seconds(131072), 2e-3, 4e-5);
  p.l2_row_bytes = 0;
  EXPECT_NEAR(seconds(131072), 1e-3, 2e-5);
}

// A product reads its smaller operand again every reread_flops of work, at most once every
// reread_span rows of the other side; a chunk's smaller activations are read again less per flop,
// and their memory draws less power at the same clock.
TEST(Simulator, AProductReadsItsSmallerOperandAgainAsL2LosesIt) {
  Profile p = load_profile("h200");
  p.reread_flops = 70e9;
  p.reread_span = 700;
  const auto logits = [](double rows) {  // X [rows x 4096] against W [4096 x 128256]
    return workload::product("logits", rows, 128256, 4096);
  };
  const double x = 2.0 * 8192 * 4096;  // the smaller operand, X, in bytes
  EXPECT_DOUBLE_EQ(reread_bytes(p, logits(8192)), x * logits(8192).flops / 70e9);
  // Halving the rows halves X and the flops: a quarter of the re-reads.
  EXPECT_NEAR(reread_bytes(p, logits(4096)) / reread_bytes(p, logits(8192)), 0.25, 1e-12);
  // At 16384 rows X is lost faster than once every reread_span columns of W allows for.
  EXPECT_DOUBLE_EQ(reread_bytes(p, logits(16384)), 2.0 * x * 128256 / 700);
  // A W too large to keep (dX: dlogits [16384 x V] by W [V x 4096]) is read again once every
  // reread_span rows, however much work each row holds.
  const auto dx = workload::product("dx", 16384, 4096, 128256);
  EXPECT_DOUBLE_EQ(reread_bytes(p, dx), 2.0 * 128256 * 4096 * 16384 / 700);
  EXPECT_EQ(reread_bytes(p, workload::stream("cross_entropy", 1e9)), 0);
  const double before = phase_seconds(p, logits(16384), p.max_mhz);
  p.reread_flops = 0;  // a profile without the figures reads each operand once
  EXPECT_EQ(reread_bytes(p, logits(16384)), 0);
  EXPECT_EQ(phase_seconds(p, logits(16384), p.max_mhz), before);  // compute-bound either way

  // What the re-reads cost: on a device held at its power limit, the one-chunk head's products
  // run at a lower clock than two chunks' when their memory draws power, and not without it.
  const auto clock_gain = [](Profile q) {
    SimOptions o;
    o.seconds = 3;
    o.lead_in_s = 0;
    o.tail_s = 0;
    const workload::LmHeadProducts w{16384, 4096, 128256};
    const double one = simulate(q, workload::make_plan({w, 1}, {}), o).run.mean_clock_mhz;
    return simulate(q, workload::make_plan({w, 2}, {}), o).run.mean_clock_mhz / one;
  };
  const double without = clock_gain(p);
  p.reread_flops = 70e9;
  EXPECT_GT(clock_gain(p), without + 0.005);
}

}  // namespace powershape::sim

namespace powershape::sim {

TEST(Simulator, ANonFiniteStateStopsTheRunWithAnError) {
  Profile p = load_profile("h200");
  p.leakage_w = 5000;  // past what profile_from_json accepts: leakage that runs away
  p.leakage_per_c = 1;
  SimOptions o;
  o.seconds = 600;
  try {
    simulate(p, workload::products_plan({8192}), o);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
}

}  // namespace powershape::sim

namespace powershape::sim {

// Each product the LM head runs, and squares, sustained on one H200 at its power limit
// (data/h200/product_power: gemm_load's TFLOP/s after the first second, two passes each): the
// profile holds each one's rate within 2.5%, though not which of a product and its half-size
// twin is faster (the GPU's kernel choice, the README there says).
TEST(Simulator, TheH200ProfileRunsEachSustainedProductAtTheGpusRate) {
  std::ifstream in(POWERSHAPE_DATA "/h200/product_power/card_6e46/summary.txt");
  ASSERT_TRUE(in) << "data/h200/product_power/card_6e46/summary.txt";
  std::map<std::string, std::pair<double, int>> measured;  // TFLOP/s summed, passes
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string tag;
    double tflops = 0;
    row >> tag >> tflops;
    auto& m = measured[tag.substr(0, tag.rfind('_'))];
    m.first += tflops;
    ++m.second;
  }
  struct Load {
    const char* name;
    double m, n, k, result_bytes;
  };
  const Load loads[] = {{"sq4096", 4096, 4096, 4096, 2},    {"sq8192", 8192, 8192, 8192, 2},
                        {"logits", 128256, 16384, 4096, 2}, {"logits_half", 128256, 8192, 4096, 2},
                        {"dx", 4096, 16384, 128256, 2},     {"dx_half", 4096, 8192, 128256, 2},
                        {"dw", 4096, 128256, 16384, 4},     {"dw_half", 4096, 128256, 8192, 4}};
  const Profile p = load_profile("h200");
  for (const Load& l : loads) {
    ASSERT_EQ(measured.count(l.name), 1u) << l.name;
    const double gpu = measured[l.name].first / measured[l.name].second;
    workload::Plan plan;
    plan.phases.push_back(workload::product(l.name, l.m, l.n, l.k, l.result_bytes));
    SimDevice d(p, {});
    d.run(plan, 0, 1);  // the first second, which gemm_load reports apart
    const RunRecord r = d.run(plan, 0, 3);
    const double sim =
        plan.total_flops() * r.iterations / static_cast<double>(r.end_ns - r.begin_ns) * 1e-3;
    EXPECT_NEAR(sim / gpu, 1, 0.025) << l.name << ": " << sim << " against " << gpu << " TFLOP/s";
  }
}

}  // namespace powershape::sim
