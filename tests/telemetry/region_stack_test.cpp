#include "powershape/telemetry/region_stack.hpp"

#include <gtest/gtest.h>

#include <string>

namespace powershape::telemetry {

TEST(RegionStack, AnEndClosesTheInnermostOfItsNameNeverBeforeItBegan) {
  RegionStack<int> s;
  s.begin({"step", -1, 100, 0}, 1);
  s.begin({"inner", 0, 150, 0}, 2);
  s.begin({"step", -1, 200, 0}, 3);
  EXPECT_FALSE(s.end("nope", 300));
  const auto a = s.end("step", 250);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->region, (Region{"step", -1, 200, 250}));
  EXPECT_EQ(a->extra, 3);              // the innermost "step" carries what its begin was given
  const auto b = s.end("inner", 120);  // a clock read a moment apart: at its begin, not before
  ASSERT_TRUE(b);
  EXPECT_EQ(b->region.end_ns, 150);
  EXPECT_TRUE(s.is_open("step"));
  EXPECT_EQ(s.find("step")->region.begin_ns, 100);
  EXPECT_EQ(s.close_all(400), (std::vector<Region>{{"step", -1, 100, 400}}));
  EXPECT_EQ(s.size(), 0u);
  EXPECT_FALSE(s.is_open("step"));
}

TEST(RegionStack, BeginsThatNeverEndHoldABoundedStackTheOldestDroppedFirst) {
  RegionStack<> s;
  for (std::size_t i = 0; i < RegionStack<>::kMaxOpen; ++i)
    EXPECT_FALSE(s.begin({"r" + std::to_string(i), -1, static_cast<int64_t>(i), 0}));
  const auto dropped = s.begin({"one more", -1, 5000, 0});
  ASSERT_TRUE(dropped);
  EXPECT_EQ(dropped->region.name, "r0");
  EXPECT_EQ(s.size(), RegionStack<>::kMaxOpen);
  EXPECT_FALSE(s.is_open("r0"));
  EXPECT_TRUE(s.is_open("r1"));
  EXPECT_TRUE(s.is_open("one more"));
  // Closed together, outermost first, none before its begin.
  const auto all = s.close_all(10);
  ASSERT_EQ(all.size(), RegionStack<>::kMaxOpen);
  EXPECT_EQ(all.front().name, "r1");
  EXPECT_EQ(all.back().end_ns, 5000);
}

}  // namespace powershape::telemetry
