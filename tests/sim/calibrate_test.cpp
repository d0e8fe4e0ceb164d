#include "powershape/sim/calibrate.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "error_of.hpp"
#include "powershape/sim/kernel_fit.hpp"
#include "powershape/sim/simulator.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::sim {

// The targets: the shipped h200 profile reproduces the recording it was fitted to
// (data/h200/record_with_probe): square-wave burst throughput at every period and the sustained
// throughput and clock within 3%, average power within 5%.
TEST(Calibrate, TheShippedH200ProfileMeetsItsRecordingWithin3Percent) {
  auto data = read_calibration_data(POWERSHAPE_DATA "/h200/record_with_probe");
  EXPECT_EQ(data.square.size(), 9u);
  ASSERT_FALSE(data.kernels.empty());
  const Profile p = load_profile("h200");
  int squares = 0;
  for (const auto& t : evaluate(p, data)) {
    // The step response (this hour's card took 195 ms, the recording before 106: NVML shows it
    // at 100 ms resolution), the probe and repro's figures are tested on their own.
    if (t.name == "step response ms" || t.name.find("(probe)") != std::string::npos ||
        t.name.find("chunks=") != std::string::npos)
      continue;
    const bool watts = t.name.back() == 'W';
    squares += t.name.rfind("square", 0) == 0 && !watts;
    EXPECT_LT(std::abs(t.error()), watts ? 0.05 : 0.03)
        << t.name << ": " << t.simulated << " vs " << t.measured;
  }
  EXPECT_EQ(squares, 9);
  EXPECT_LT(thermal_rms_c(p, data.thermal), 3.5);
  // Matmul-softmax-matmul's kernels, each timed alone, within 3% at every chunk count.
  std::map<std::string, std::pair<double, double>> msm;
  for (const auto& k : data.kernels) {
    if (k.config.rfind("msm", 0) != 0) continue;
    msm[k.config].first += k.ms;
    msm[k.config].second += kernel_ms(p, k);
  }
  ASSERT_EQ(msm.size(), 7u);
  for (const auto& [c, v] : msm) EXPECT_NEAR(v.second / v.first, 1, 0.03) << c;
}

// The recording's other square waves (25% and 75% duty, idle and memory gaps), shown beside the
// fit: all but the two 2 ms periods within 3% (a 0.5 ms burst after an idle gap runs 2.6% under
// longer ones on the card, +1.5% over in the model; a 0.5 ms memory gap lets a 1.5 ms burst run
// 3% faster on the card, not in the model), those within 5%.
TEST(Calibrate, TheShippedH200ProfileMeetsTheOtherSquareWavesItWasNotFittedTo) {
  const auto data = read_calibration_data(POWERSHAPE_DATA "/h200/record_with_probe");
  const auto squares = evaluate_other_squares(load_profile("h200"), data);
  ASSERT_EQ(squares.size(), 45u);
  int within = 0;
  for (const auto& t : squares) {
    within += std::abs(t.error()) <= 0.03;
    EXPECT_LT(std::abs(t.error()), 0.05) << t.name << ": " << t.simulated << " vs " << t.measured;
  }
  EXPECT_GE(within, 43);
}

// Two cards of the pool the profile was not fitted to (data/h200/record_heldout_1 and
// record_heldout_2, recorded a day later): cards differ by 2-4% in what they sustain at 700 W, so
// the shipped profile is held to 3.5% on their 50%-duty waves, to 36 of their 45 other waves
// within 3% (43 on its own card), their sustained throughput within 2%, and its accuracy figure
// must hold: 9 in 10 of their chunk ratios within the points it carries.
TEST(Calibrate, TheShippedH200ProfileHoldsOnCardsItWasNotFittedTo) {
  const Profile p = load_profile("h200");
  ASSERT_GT(p.chunk_ratio_points, 0);
  for (const char* card : {"/h200/record_heldout_1", "/h200/record_heldout_2"}) {
    const auto data = read_calibration_data(std::string(POWERSHAPE_DATA) + card);
    int squares = 0;
    const auto targets = evaluate(p, data);
    for (const auto& t : targets) {
      if (t.name.rfind("square", 0) == 0 && t.name.back() == 's') {
        ++squares;
        EXPECT_LT(std::abs(t.error()), 0.035) << card << " " << t.name;
      } else if (t.name.rfind("sustained TFLOP/s", 0) == 0) {
        EXPECT_LT(std::abs(t.error()), 0.02) << card;
      }
    }
    EXPECT_EQ(squares, 9) << card;
    const RatioSummary r = summarize_ratios(targets);
    EXPECT_GE(r.count, 6) << card;
    EXPECT_LE(r.p90_points, p.chunk_ratio_points) << card;
    const auto others = evaluate_other_squares(p, data);
    ASSERT_EQ(others.size(), 45u) << card;
    int within = 0;
    for (const auto& t : others) within += std::abs(t.error()) <= 0.03;
    EXPECT_GE(within, 36) << card;
  }
}

// The chunk ratios summed up: only "... / 1 chunk" targets count; a ratio on the GPU's side of 1
// is a gain or a loss as the GPU has it, whatever its distance; 9 in 10 are within the nearest
// rank's distance.
TEST(Calibrate, ChunkRatiosAreSummedUpAgainstTheGpus) {
  const std::vector<Target> t = {{"lmhead a chunks=2 / 1 chunk", 0.980, 0.984},
                                 {"lmhead a chunks=4 / 1 chunk", 0.990, 1.010},
                                 {"lmhead a chunks=8 / 1 chunk", 1.040, 1.020},
                                 {"lmhead a chunks=1 ms", 80, 90}};
  const RatioSummary r = summarize_ratios(t);
  EXPECT_EQ(r.count, 3);
  EXPECT_EQ(r.within_half_point, 1);
  EXPECT_EQ(r.same_side, 2);
  EXPECT_NEAR(r.mean_points, (0.4 + 2.0 + 2.0) / 3, 1e-9);
  EXPECT_NEAR(r.p90_points, 2.0, 1e-9);
  std::vector<Target> many;  // 0.1 to 2.0 points off: 9 in 10 within 1.8
  for (int i = 1; i <= 20; ++i)
    many.push_back({"msm chunks=" + std::to_string(i) + " / 1 chunk", 1, 1 + 0.001 * i});
  EXPECT_NEAR(summarize_ratios(many).p90_points, 1.8, 1e-9);
  EXPECT_EQ(summarize_ratios({}).count, 0);
}

// The same ratio measured in several runs (folders) spans a range; the model is judged against
// that span: within half a point of it counts, a ratio measured once does not count at all.
TEST(Calibrate, ChunkRatiosMeasuredInSeveralRunsAreJudgedAgainstTheirSpan) {
  const std::vector<Target> t = {
      {"lmhead a chunks=2 / 1 chunk", 0.980, 0.994},                    // the recording's own
      {"card4: lmhead a chunks=2 / 1 chunk", 0.990, 0.994, "card4: "},  // 0.4 point above 0.99
      {"lmhead a chunks=4 / 1 chunk", 0.980, 1.000},
      {"card4: lmhead a chunks=4 / 1 chunk", 0.985, 1.000, "card4: "},   // 1.5 points above
      {"card4: lmhead a chunks=8 / 1 chunk", 1.040, 1.200, "card4: "}};  // one run only
  const RatioSummary r = summarize_ratios(t);
  EXPECT_EQ(r.several_runs, 2);
  EXPECT_NEAR(r.widest_run_range_points, 1.0, 1e-9);
  ASSERT_EQ(r.outside_runs.size(), 1u);
  EXPECT_EQ(r.outside_runs[0], "lmhead a chunks=4");
  EXPECT_EQ(summarize_ratios({t[0], t[4]}).several_runs, 0);
}

// The re-read rule against what it was fitted to: Nsight Compute's DRAM reads of 236 products
// (data/h200/ncu_products/products.csv), each the operands once, the fp32 dW it accumulates into
// and the re-reads the experiment profile's figures give (fit_rereads.py's rms log error, 0.40);
// reading each operand once misses by a factor of four or so (rms log error 1.48).
TEST(Calibrate, TheRereadRuleMeetsTheProductsHbmReads) {
  std::ifstream in(POWERSHAPE_DATA "/h200/ncu_products/products.csv");
  ASSERT_TRUE(in.good());
  const Profile p = load_profile(POWERSHAPE_DATA "/h200/ncu_products/h200_rereads.json");
  std::string line;
  std::getline(in, line);  // config,kernel,product,m,n,k,accumulates,dram_read_bytes,...
  double with = 0, without = 0;
  int rows = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    ASSERT_GE(cells.size(), 8u) << line;
    const double m = std::stod(cells[3]), n = std::stod(cells[4]), k = std::stod(cells[5]);
    const bool acc = cells[6] == "1";
    const auto ph = workload::product(cells[2], m, n, k, acc ? 4 : 2, acc);
    // The bytes read: the operands once, and the fp32 result it reads back when it accumulates.
    const double once = 2 * k * (m + n) + (acc ? 4 * m * n : 0);
    const double read = std::stod(cells[7]);
    with += std::pow(std::log((once + reread_bytes(p, ph)) / read), 2);
    without += std::pow(std::log(once / read), 2);
    ++rows;
  }
  ASSERT_EQ(rows, 236);
  EXPECT_LT(std::sqrt(with / rows), 0.41);
  EXPECT_GT(std::sqrt(without / rows), 1.4);
}

// The h200 profile refitted with the products' HBM re-reads (data/h200/ncu_products, an experiment
// beside the shipped profile) ranks the 16384x4096x128256 head's chunk counts as every card
// does: 2 chunks faster than one (cards .977-.990), 8 slower (1.019-1.038). The cards ran the op
// with its fp32 dW then.
TEST(Calibrate, TheRereadExperimentRanksTheLmHeadsChunksAsTheCardsDo) {
  const Profile p = load_profile(POWERSHAPE_DATA "/h200/ncu_products/h200_rereads.json");
  ASSERT_GT(p.reread_flops, 0);
  workload::LmHead head{16384, 4096, 128256};
  head.dw_bytes = 4;
  const auto ms = [&](int chunks) {
    SimOptions o;
    o.lead_in_s = 0;
    o.tail_s = 0;
    o.seconds = 4;
    const auto r = simulate(p, workload::lmhead_plan(head, chunks), o).run;
    return static_cast<double>(r.end_ns - r.begin_ns) * 1e-6 / r.iterations;
  };
  const double one = ms(1);
  EXPECT_LT(ms(2) / one, 0.999);
  EXPECT_GT(ms(8) / one, 1.005);
}

// The same card recorded an hour earlier (data/h200/record), apart from the fit: every square
// wave's burst throughput and the sustained figures within 3%.
TEST(Calibrate, TheShippedH200ProfileMeetsAnEarlierRecordingWithin3Percent) {
  auto data = read_calibration_data(POWERSHAPE_DATA "/h200/record");
  for (const auto& t : evaluate(load_profile("h200"), data)) {
    if (t.name.find("TFLOP/s") == std::string::npos && t.name.find("MHz") == std::string::npos)
      continue;
    EXPECT_LT(std::abs(t.error()), 0.03) << t.name << ": " << t.simulated << " vs " << t.measured;
  }
}

// The on-GPU clock probe of data/h200 (recorded apart from the profile's fit): the real clock in
// the first millisecond of load (the fast limiter) and at 50-100 ms (the slow loop).
TEST(Calibrate, TheShippedH200ProfileFollowsTheClockProbe) {
  auto data = read_calibration_data(POWERSHAPE_DATA "/h200");
  EXPECT_NEAR(data.probe_first_ms_mhz, 1711, 5);
  int seen = 0;
  for (const auto& t : evaluate(load_profile("h200"), data)) {
    if (t.name.find("(probe)") == std::string::npos) continue;
    ++seen;
    EXPECT_LT(std::abs(t.error()), 0.05) << t.name << ": " << t.simulated << " vs " << t.measured;
  }
  EXPECT_EQ(seen, 2);
}

TEST(Calibrate, FitsAPerturbedProfileBackTowardsTheData) {
  auto data = read_calibration_data(POWERSHAPE_DATA "/h200");
  Profile p = load_profile("h200");
  p.flops_per_cycle *= 1.15;
  p.window_ms *= 3;
  auto c = calibrate(p, data, 120);
  auto worst = [](const std::vector<Target>& ts) {
    double w = 0;
    for (const auto& t : ts) {
      if (t.name != "step response ms") w = std::max(w, std::abs(t.error()));
    }
    return w;
  };
  EXPECT_GT(worst(c.before), 0.10);
  EXPECT_LT(worst(c.after), 0.05);
  // No repro results in data/h200: the profile's medium loop is kept as it was, not refitted.
  EXPECT_EQ(c.profile.medium_limit_w, p.medium_limit_w);
  EXPECT_EQ(c.profile.medium_window_ms, p.medium_window_ms);
  // Nor any chunk ratio to say what the refitted profile's are worth: the start's figure goes,
  // and its source line with it.
  EXPECT_GT(p.chunk_ratio_points, 0);
  EXPECT_EQ(c.profile.chunk_ratio_points, 0);
  for (const auto& s : c.profile.sources)
    EXPECT_EQ(s.rfind("accuracy.chunk_ratio_points", 0), std::string::npos) << s;
  EXPECT_EQ(data.folders, std::vector<std::string>{POWERSHAPE_DATA "/h200"});
}

// repro -o's results beside a recording are targets too: each configuration's sustained ms,
// NVML clock and power, the chunk effect itself.
TEST(Calibrate, ReadsAndSimulatesReproResults) {
  const auto d = read_calibration_data(POWERSHAPE_DATA "/h200/record_with_probe");
  ASSERT_EQ(d.repro.size(), 16u);  // 6 + 6 LM head configurations, 4 of msm
  EXPECT_EQ(d.repro.front().name, "lmhead 131072x896x151936 chunks=1");
  EXPECT_NEAR(d.repro.front().sm_clock_mhz, 1440, 1);
  const auto* l = std::get_if<workload::LmHead>(&d.repro.front().workload.kind);
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->tokens, 131072);
  EXPECT_TRUE(l->backward);
  std::map<std::string, Target> t;
  for (const auto& x : evaluate(load_profile("h200"), d)) t.emplace(x.name, x);
  ASSERT_TRUE(t.count("msm 65536x512x65536 chunks=4 ms"));
  ASSERT_TRUE(t.count("lmhead 16384x4096x128256 chunks=64 NVML MHz"));
  // The shipped profile, fitted to these: 1-chunk steps within 2% (the target) ...
  for (const char* c :
       {"lmhead 131072x896x151936", "lmhead 16384x4096x128256", "msm 65536x512x65536"})
    EXPECT_LT(std::abs(t.at(std::string(c) + " chunks=1 ms").error()), 0.02) << c;
  // ... the 131072x896 head's chunk effect as the card has it: 8 chunks faster than 1, 16 and
  // 32 slower than 8, and its reported clock higher once the products are chunked short (the
  // card: +67 MHz at 8 chunks; two loops alone gave +5 MHz at 16) ...
  const auto sim = [&](const std::string& n) { return t.at(n).simulated; };
  const std::string h = "lmhead 131072x896x151936 chunks=";
  EXPECT_LT(sim(h + "8 ms"), sim(h + "1 ms"));
  EXPECT_GT(sim(h + "16 ms"), sim(h + "8 ms"));
  EXPECT_GT(sim(h + "32 ms"), sim(h + "16 ms"));
  EXPECT_GT(sim(h + "16 NVML MHz"), sim(h + "1 NVML MHz") + 15);
  // ... and the 64-chunk 16384x4096 step within 3% (its dW at k = 256 accumulates 4.2 GB of fp32
  // a kernel, at kernels.epilogue_efficiency of the copy bandwidth).
  EXPECT_LT(std::abs(t.at("lmhead 16384x4096x128256 chunks=64 ms").error()), 0.03);
}

// A recording with the clock probe beside each kernel (data/h200/record_kernel_clocks): each
// repro configuration's products and memory kernels get their real clock, shown and not fitted.
TEST(Calibrate, ShowsEachConfigurationsPhaseClocksWithoutFittingThem) {
  const auto d = read_calibration_data(POWERSHAPE_DATA "/h200/record_kernel_clocks");
  ASSERT_EQ(d.repro.size(), 18u);
  std::map<std::string, Target> t;
  for (const auto& x : evaluate(load_profile("h200"), d)) t.emplace(x.name, x);
  const std::string one = "lmhead 131072x896x151936 chunks=1";
  ASSERT_TRUE(t.count(one + kProductsRealMhz));
  const Target& products = t.at(one + kProductsRealMhz);
  const Target& memory = t.at(one + kMemoryRealMhz);
  EXPECT_TRUE(is_phase_clock(products));
  EXPECT_FALSE(is_phase_clock(t.at(one + " NVML MHz")));
  // The card: the cross-entropy pass between the products runs ~130 MHz above them.
  EXPECT_GT(memory.measured, products.measured + 80);
  EXPECT_GT(products.simulated, 1000);
  EXPECT_GT(memory.simulated, 1000);
  // A recording without them (record_with_probe's kernels.csv predates the column) has none.
  for (const auto& x : evaluate(load_profile("h200"),
                                read_calibration_data(POWERSHAPE_DATA "/h200/record_with_probe")))
    EXPECT_FALSE(is_phase_clock(x)) << x.name;
}

// Other cards' repro results as more targets: labelled with their folder, each ratio taken on its
// own card (file), each configuration simulated once.
TEST(Calibrate, AddsOtherCardsReproResultsEachRatioOnItsOwnCard) {
  auto d = read_calibration_data(POWERSHAPE_DATA "/h200/record_with_probe");
  const std::size_t own = d.repro.size();
  add_repro(d, POWERSHAPE_DATA "/h200/repro_spread/");
  ASSERT_GT(d.repro.size(), own);
  EXPECT_EQ(d.repro.back().label, "repro_spread: ");
  const auto all = evaluate(load_profile("h200"), d);
  std::map<std::string, Target> t;
  for (const auto& x : all) t.emplace(x.name, x);
  // The card in repro_spread: 184.17 / 186.91 ms at 8 chunks over 1; the model's ratio is the
  // same for every card.
  const Target& other = t.at("repro_spread: lmhead 131072x896x151936 chunks=8 / 1 chunk");
  const Target& mine = t.at("lmhead 131072x896x151936 chunks=8 / 1 chunk");
  EXPECT_NEAR(other.measured, 184.17 / 186.91, 1e-3);
  EXPECT_NEAR(mine.measured, 181.12 / 184.75, 1e-3);
  EXPECT_DOUBLE_EQ(other.simulated, mine.simulated);
  // Two msm files there (two cards): each 4-chunk ratio over its own file's 1 chunk.
  int msm4 = 0;
  for (const auto& x : all) {
    if (x.name == "repro_spread: msm 65536x512x65536 chunks=4 / 1 chunk") {
      ++msm4;
      EXPECT_NEAR(x.measured, 1, 0.002);  // 35.98 / 35.98 and 36.00 / 36.03
    }
  }
  EXPECT_EQ(msm4, 2);
  EXPECT_EQ(testing::error_of([&] { add_repro(d, POWERSHAPE_DATA "/h200/nope"); }),
            "repro: " POWERSHAPE_DATA "/h200/nope is not a folder");
  EXPECT_EQ(testing::error_of([&] { add_repro(d, POWERSHAPE_DATA "/h200/record"); }),
            "repro: " POWERSHAPE_DATA "/h200/record holds no repro_*.json");
}

TEST(Calibrate, AMissingFileIsNamed) {
  try {
    read_calibration_data("/nonexistent");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "data: /nonexistent is not a folder");
  }
}

}  // namespace powershape::sim
