#include "powershape/analysis/swing_run.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "error_of.hpp"
#include "printed.hpp"

namespace powershape::analysis {
namespace {

using testing::error_of;

// A meter's CSV of a 2 Hz square wave between 100 and 700 W, read every 10 ms for 30 s.
std::string square_meter() {
  const auto p = std::filesystem::temp_directory_path() /
                 ("ps_swing_run_" + std::to_string(::getpid()) + ".csv");
  std::ofstream f(p);
  f << "t_s,power_w\n";
  for (int i = 0; i < 3000; ++i) f << i * 0.01 << ',' << ((i / 25) % 2 == 0 ? 700 : 100) << '\n';
  return p.string();
}

std::string printed(const SwingRun& r) {
  return testing::printed([&](std::FILE* f) { print_swing_run(f, r, "HINT"); });
}

}  // namespace

// The square wave's period and the spec's verdicts; a meter gives no rated power, and the printer
// says how to give one; the JSON names its inputs and spec.
TEST(SwingRun, AMetersSquareWaveAgainstTheDefaultSpec) {
  SwingRequest q;
  q.recordings = {square_meter()};
  const SwingRun r = swing_run(q);
  EXPECT_NEAR(r.swing.period_s, 0.5, 0.02);
  EXPECT_EQ(r.fleet, 0);
  EXPECT_EQ(r.spec.name, "grid-example");
  const std::string out = printed(r);
  EXPECT_NE(out.find("(the recordings give no rated power: HINT)"), std::string::npos) << out;
  EXPECT_NE(out.find("verdict:"), std::string::npos);
  const auto j = to_json(r);
  EXPECT_EQ(j.at("inputs")[0], q.recordings[0]);
  EXPECT_EQ(j.at("spec").at("name"), "grid-example");
  // Rated power given: its share is checked, and nothing is said of it.
  q.rated_w = 700;
  EXPECT_EQ(printed(swing_run(q)).find("HINT"), std::string::npos);
  std::filesystem::remove(q.recordings[0]);
}

// A fleet scale needs the GPUs a recording holds, which a meter does not say; a fold needs its
// region. Each refusal names its option.
TEST(SwingRun, WhatCannotBeAnalysedIsNamed) {
  SwingRequest q;
  q.recordings = {square_meter()};
  q.gpus = 8;
  EXPECT_EQ(error_of([&] { swing_run(q); }).rfind("gpus: a meter's CSV", 0), 0u);
  q.gpus = 0;
  q.fold_ms = 10;
  EXPECT_EQ(error_of([&] { swing_run(q); }).rfind("fold: ", 0), 0u);
  std::filesystem::remove(q.recordings[0]);
}

}  // namespace powershape::analysis
