#include "powershape/reference/lmhead_ref.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace powershape::reference {
namespace {

struct Problem {
  int64_t n = 5, d = 4, v = 7;
  std::vector<double> x, w;
  std::vector<int64_t> t;
};

Problem random_problem(uint64_t seed) {
  Problem p;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g(0, 1);
  for (int64_t i = 0; i < p.n * p.d; ++i) p.x.push_back(g(rng));
  for (int64_t i = 0; i < p.v * p.d; ++i) p.w.push_back(g(rng));
  p.t = {3, -100, 0, 6, 2};
  return p;
}

}  // namespace

TEST(LmHeadReference, PlainCrossEntropyOfOneToken) {
  // One token, D = 1, x = 1: logits are the weights. loss = lse - z_t.
  auto r = lmhead_reference({1.0}, {1.0, 2.0, 3.0}, {1}, 1, 1, 3, {});
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(r.loss, lse - 2.0, 1e-12);
  EXPECT_NEAR(r.lse[0], lse, 1e-12);
  EXPECT_NEAR(r.dw[1], std::exp(2.0 - lse) - 1, 1e-12);
}

// Every option's gradient agrees with central finite differences of the loss.
TEST(LmHeadReference, GradientsMatchFiniteDifferencesForEveryOption) {
  LmHeadOptions cases[5];
  cases[1].label_smoothing = 0.1;
  cases[2].z_loss = 1e-2;
  cases[3].softcap = 2.5;
  cases[4].reduction = Reduction::kSum;
  cases[4].grad_scale = 0.7;
  cases[4].label_smoothing = 0.05;
  for (const auto& o : cases) {
    Problem p = random_problem(3);
    auto r = lmhead_reference(p.x, p.w, p.t, p.n, p.d, p.v, o);
    const double scale = o.grad_scale;
    const double h = 1e-6;
    for (std::size_t i = 0; i < p.x.size(); i += 3) {
      auto xp = p.x, xm = p.x;
      xp[i] += h;
      xm[i] -= h;
      double fd = (lmhead_reference(xp, p.w, p.t, p.n, p.d, p.v, o).loss -
                   lmhead_reference(xm, p.w, p.t, p.n, p.d, p.v, o).loss) /
                  (2 * h) * scale;
      EXPECT_NEAR(r.dx[i], fd, 1e-6) << "dx " << i;
    }
    for (std::size_t i = 0; i < p.w.size(); i += 4) {
      auto wp = p.w, wm = p.w;
      wp[i] += h;
      wm[i] -= h;
      double fd = (lmhead_reference(p.x, wp, p.t, p.n, p.d, p.v, o).loss -
                   lmhead_reference(p.x, wm, p.t, p.n, p.d, p.v, o).loss) /
                  (2 * h) * scale;
      EXPECT_NEAR(r.dw[i], fd, 1e-6) << "dw " << i;
    }
  }
}

TEST(LmHeadReference, IgnoredTokensAddNothing) {
  Problem p = random_problem(5);
  auto r = lmhead_reference(p.x, p.w, p.t, p.n, p.d, p.v, {});
  EXPECT_EQ(r.token_loss[1], 0);
  for (int64_t k = 0; k < p.d; ++k) EXPECT_EQ(r.dx[static_cast<std::size_t>(p.d + k)], 0);
  double sum = 0;
  for (double l : r.token_loss) sum += l;
  EXPECT_NEAR(r.loss, sum / 4, 1e-12);  // mean over the 4 valid tokens
  EXPECT_THROW(lmhead_reference(p.x, p.w, {0, 1, 2, 3, 7}, p.n, p.d, p.v, {}),
               std::invalid_argument);
}

}  // namespace powershape::reference
