#include "powershape/advise/outcome_table.hpp"

#include <gtest/gtest.h>

namespace powershape::advise {

// The recommendation first, the GPU as found next, then the settings sorted from the highest.
TEST(AdviseTable, TheRecommendationFirstThenSortedSettings) {
  std::vector<advise::Outcome> o(6);
  o[1].setting.clock_cap_mhz = 1200;
  o[2].setting.power_limit_w = 450;
  o[3].setting.clock_cap_mhz = 1800;
  o[4].setting.power_limit_w = 600;
  o[5].setting.clock_cap_mhz = 1500;
  EXPECT_EQ(table_order(o, 5), (std::vector<std::size_t>{5, 0, 4, 2, 3, 1}));
  EXPECT_EQ(table_order(o, 0), (std::vector<std::size_t>{0, 4, 2, 3, 5, 1}));
}

}  // namespace powershape::advise
