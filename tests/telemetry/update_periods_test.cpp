#include "powershape/telemetry/update_periods.hpp"

#include <gtest/gtest.h>

namespace powershape::telemetry {
namespace {

using Runs = std::vector<std::pair<std::size_t, std::size_t>>;

// GPUs of one model read a period apart are one row; another model, or a GPU that measured other
// signals, starts a row of its own.
TEST(UpdatePeriods, NeighboursAlikeShareARow) {
  // ms: energy and power of four GPUs, read every 40 ms; the third is another model (20 ms).
  const std::vector<std::vector<double>> periods = {
      {100, 25}, {93.9, 26}, {20, 25}, {20, 25}, {20}};
  const std::vector<std::vector<double>> slack = {{40, 40}, {40, 40}, {4, 4}, {4, 4}, {4}};
  EXPECT_EQ(alike_runs(periods, slack), (Runs{{0, 2}, {2, 4}, {4, 5}}));
  // Without the read's slack, 93.9 against 110 is more than 10% apart.
  EXPECT_EQ(alike_runs({{110}, {93.9}}, {{1}, {1}}), (Runs{{0, 1}, {1, 2}}));
  EXPECT_EQ(alike_runs({{110}, {93.9}}, {{40}, {40}}), (Runs{{0, 2}}));
  EXPECT_TRUE(alike_runs({}, {}).empty());
}

}  // namespace
}  // namespace powershape::telemetry
