#include "powershape/sim/nelder_mead.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace powershape::sim {

TEST(NelderMead, FindsTheMinimumOfABowlAndOfRosenbrocksValley) {
  int evals = 0;
  auto bowl = [](const std::vector<double>& x) {
    return (x[0] - 3) * (x[0] - 3) + 2 * (x[1] + 1) * (x[1] + 1) + 5;
  };
  auto b = nelder_mead(bowl, {0, 0}, {1, 1}, 500, 1e-12, &evals);
  EXPECT_NEAR(b[0], 3, 1e-4);
  EXPECT_NEAR(b[1], -1, 1e-4);
  EXPECT_LE(evals, 500);
  auto rosen = [](const std::vector<double>& x) {
    return 100 * std::pow(x[1] - x[0] * x[0], 2) + std::pow(1 - x[0], 2);
  };
  auto r = nelder_mead(rosen, {-1.2, 1}, {0.5, 0.5}, 2000, 1e-14, &evals);
  EXPECT_NEAR(r[0], 1, 1e-3);
  EXPECT_NEAR(r[1], 1, 2e-3);
}

TEST(NelderMead, StopsAtItsEvaluationBudget) {
  int evals = 0, calls = 0;
  auto f = [&](const std::vector<double>& x) {
    ++calls;
    return x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
  };
  auto x = nelder_mead(f, {10, 10, 10}, {1, 1, 1}, 30, 0, &evals);
  EXPECT_EQ(evals, calls);
  EXPECT_LE(evals, 30 + 3);  // a shrink may finish its sweep over the simplex
  EXPECT_LT(f(x), 300);      // and the point returned is better than the start
}

TEST(NelderMead, StopsWhenTheSimplexAgrees) {
  int evals = 0;
  auto flat = [](const std::vector<double>&) { return 1.0; };
  nelder_mead(flat, {0, 0}, {1, 1}, 1000, 1e-9, &evals);
  EXPECT_EQ(evals, 3);  // the first simplex already agrees
}

}  // namespace powershape::sim
