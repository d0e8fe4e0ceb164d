#include "powershape/reference/lmhead_ref.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "powershape/util/error.hpp"

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

// A column masked by a -inf bias is a column that is not there: the loss and gradients are the
// other columns' (the op's GPU tests mask whole tiles of the vocabulary so).
TEST(LmHeadReference, AColumnMaskedByAMinusInfiniteBiasIsAbsent) {
  const std::vector<double> w = {1.0, 2.0, 3.0};
  LmHeadOptions masked;
  masked.bias = {-INFINITY, 0, 0};
  auto r = lmhead_reference({1.0}, w, {1}, 1, 1, 3, masked);
  auto without = lmhead_reference({1.0}, {2.0, 3.0}, {0}, 1, 1, 2, {});
  EXPECT_NEAR(r.loss, without.loss, 1e-12);
  EXPECT_NEAR(r.dw[1], without.dw[0], 1e-12);
  EXPECT_EQ(r.dw[0], 0.0);
  EXPECT_EQ(r.dbias[0], 0.0);
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

// With a bias and per-token incoming gradients (reduction none), the gradients are those of
// sum_i token_grad[i] x loss_i, by central finite differences, dbias included.
TEST(LmHeadReference, BiasAndPerTokenGradientsMatchFiniteDifferences) {
  Problem p = random_problem(7);
  LmHeadOptions o;
  o.reduction = Reduction::kNone;
  o.softcap = 3;
  o.bias = {0.3, -1.2, 0.0, 2.0, -0.5, 0.7, 1.1};
  o.token_grad = {0.5, 9.0, -1.5, 2.0, 0.25};
  auto weighted = [&](const std::vector<double>& x, const std::vector<double>& w,
                      const std::vector<double>& b) {
    LmHeadOptions q = o;
    q.bias = b;
    auto r = lmhead_reference(x, w, p.t, p.n, p.d, p.v, q);
    double sum = 0;
    for (std::size_t i = 0; i < r.token_loss.size(); ++i) sum += o.token_grad[i] * r.token_loss[i];
    return sum;
  };
  auto r = lmhead_reference(p.x, p.w, p.t, p.n, p.d, p.v, o);
  const double h = 1e-6;
  for (std::size_t j = 0; j < o.bias.size(); ++j) {
    auto bp = o.bias, bm = o.bias;
    bp[j] += h;
    bm[j] -= h;
    EXPECT_NEAR(r.dbias[j], (weighted(p.x, p.w, bp) - weighted(p.x, p.w, bm)) / (2 * h), 1e-6);
  }
  for (std::size_t i = 0; i < p.x.size(); i += 3) {
    auto xp = p.x, xm = p.x;
    xp[i] += h;
    xm[i] -= h;
    EXPECT_NEAR(r.dx[i], (weighted(xp, p.w, o.bias) - weighted(xm, p.w, o.bias)) / (2 * h), 1e-6);
  }
  for (std::size_t i = 0; i < p.w.size(); i += 4) {
    auto wp = p.w, wm = p.w;
    wp[i] += h;
    wm[i] -= h;
    EXPECT_NEAR(r.dw[i], (weighted(p.x, wp, o.bias) - weighted(p.x, wm, o.bias)) / (2 * h), 1e-6);
  }
  o.bias.pop_back();
  EXPECT_THROW(lmhead_reference(p.x, p.w, p.t, p.n, p.d, p.v, o), powershape::Error);
}

TEST(LmHeadReference, IgnoredTokensAddNothing) {
  Problem p = random_problem(5);
  auto r = lmhead_reference(p.x, p.w, p.t, p.n, p.d, p.v, {});
  EXPECT_EQ(r.token_loss[1], 0);
  for (int64_t k = 0; k < p.d; ++k) EXPECT_EQ(r.dx[static_cast<std::size_t>(p.d + k)], 0);
  double sum = 0;
  for (double l : r.token_loss) sum += l;
  EXPECT_NEAR(r.loss, sum / 4, 1e-12);  // mean over the 4 valid tokens
  EXPECT_THROW(lmhead_reference(p.x, p.w, {0, 1, 2, 3, 7}, p.n, p.d, p.v, {}), powershape::Error);
}

}  // namespace powershape::reference
