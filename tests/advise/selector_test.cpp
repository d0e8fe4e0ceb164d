#include "powershape/advise/selector.hpp"

#include <gtest/gtest.h>

#include <random>

#include "powershape/sim/simulator.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::advise {

TEST(Selector, LearnsARelationAndRoundTrips) {
  // The optimum's clock share falls with the memory-bound share and rises with the power share.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Features> x;
  std::vector<double> y;
  for (int i = 0; i < 60; ++i) {
    Features f;
    f.compute = u(rng);
    f.memory = (1 - f.compute) * u(rng);
    f.power_share = 0.3 + 0.7 * u(rng);
    f.clock_share = 0.6 + 0.4 * u(rng);
    x.push_back(f);
    y.push_back(0.5 - 0.2 * f.memory + 0.2 * f.power_share);
  }
  const Selector s = Selector::train(x, y);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(s.predict(x[i]), y[i], 0.03);
  const Selector back = Selector::from_json(s.to_json());
  EXPECT_DOUBLE_EQ(back.predict(x[0]), s.predict(x[0]));
  EXPECT_THROW(Selector::train({x[0], x[1]}, {0.5, 0.5}), powershape::Error);
  auto j = s.to_json();
  j["weights"] = {1, 2};
  EXPECT_THROW(Selector::from_json(j), std::runtime_error);
  j = s.to_json();
  j["scale"][0] = 0;
  EXPECT_THROW(Selector::from_json(j), std::runtime_error);
}

// Features of a short simulated run, and the shipped model's pick for it.
TEST(Selector, FeaturesOfARunAndTheShippedModel) {
  const sim::Profile p = sim::load_profile("h200");
  sim::SimOptions o;
  o.seconds = 2;
  o.lead_in_s = 0;
  o.tail_s = 0;
  o.step_s = 5e-4;
  const auto products = sim::simulate(
      p,
      workload::make_plan({workload::Products{8192}}, {p.peak_flops_per_s(), p.peak_bytes_per_s()}),
      o);
  const Features f = features_of(products.trace, 0, p.power_limit_w, p.max_mhz);
  EXPECT_GT(f.compute, 0.8);
  EXPECT_NEAR(f.power_share, 1, 0.05);  // at the cap
  EXPECT_GT(f.capped, 0.5);
  EXPECT_LT(f.clock_share, 0.85);
  const Selector s = load_selector();
  const double share = s.predict(f);
  EXPECT_GE(share, 0.3);
  EXPECT_LE(share, 1);
  EXPECT_THROW(load_selector("/no/such/selector.json"), std::runtime_error);
  sim::SimDevice idle(p, {});
  idle.idle(3);
  EXPECT_THROW(features_of(idle.trace(), 0, p.power_limit_w, p.max_mhz), std::runtime_error);
}

}  // namespace powershape::advise
