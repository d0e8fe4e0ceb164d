#include "powershape/analysis/grid_spec.hpp"

#include <gtest/gtest.h>

#include "error_of.hpp"

namespace powershape::analysis {
namespace {

using nlohmann::json;
using testing::error_of;

std::string error_for(const std::string& text) {
  return error_of([&] { grid_spec_from_json(json::parse(text)); });
}

}  // namespace

TEST(GridSpec, TheShippedExampleLoadsByName) {
  const GridSpec g = load_grid_spec(kDefaultGridSpec);
  EXPECT_EQ(g.name, "grid-example");
  ASSERT_TRUE(g.ramp_up && g.ramp_down && g.range);
  EXPECT_TRUE(g.ramp_up->of_rated);
  EXPECT_DOUBLE_EQ(g.ramp_window_s, 1);
  ASSERT_EQ(g.bands.size(), 1u);
  EXPECT_DOUBLE_EQ(g.bands[0].lo_hz, 0.1);
  EXPECT_DOUBLE_EQ(g.bands[0].hi_hz, 20);
  EXPECT_DOUBLE_EQ(g.bands[0].max_share.value(), 0.2);
  EXPECT_FALSE(g.bands[0].source.empty());
}

TEST(GridSpec, AbsoluteAndRatedLimits) {
  const GridSpec g = grid_spec_from_json(json::parse(R"({
    "ramp": {"window_s": 0.5, "up_max_w_per_s": 3e6, "source": "utility"},
    "range": {"window_s": 60, "max_w": 2e7}})"));
  EXPECT_FALSE(g.ramp_up->of_rated);
  EXPECT_DOUBLE_EQ(g.ramp_up->value, 3e6);
  EXPECT_EQ(g.ramp_up->source, "utility");
  EXPECT_FALSE(g.ramp_down);
  EXPECT_DOUBLE_EQ(g.range_window_s, 60);
  EXPECT_TRUE(g.bands.empty());
}

TEST(GridSpec, ABandLimitsItsShareItsMagnitudeOrBoth) {
  const GridSpec g = grid_spec_from_json(json::parse(R"({"bands": [
    {"lo_hz": 0.1, "hi_hz": 20, "max_rms_share": 0.02, "source": "utility"},
    {"lo_hz": 0.1, "hi_hz": 1, "max_share": 0.3, "max_rms_w": 5e6}]})"));
  ASSERT_EQ(g.bands.size(), 2u);
  EXPECT_FALSE(g.bands[0].max_share);
  ASSERT_TRUE(g.bands[0].max_rms);
  EXPECT_TRUE(g.bands[0].max_rms->of_rated);
  EXPECT_DOUBLE_EQ(g.bands[0].max_rms->value, 0.02);
  EXPECT_EQ(g.bands[0].max_rms->source, "utility");
  EXPECT_DOUBLE_EQ(g.bands[1].max_share.value(), 0.3);
  EXPECT_FALSE(g.bands[1].max_rms->of_rated);
  EXPECT_DOUBLE_EQ(g.bands[1].max_rms->value, 5e6);
  EXPECT_NE(error_for(R"({"bands":[{"lo_hz":1,"hi_hz":2}]})").find("bands[0]: no max_share"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"bands":[{"lo_hz":1,"hi_hz":2,"max_rms_w":1,"max_rms_share":0.1}]})")
                .find("both given"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"bands":[{"lo_hz":1,"hi_hz":2,"max_rms_share":2}]})")
                .find("bands[0].max_rms_share: 2 is outside"),
            std::string::npos);
}

TEST(GridSpec, EachMistakeIsNamed) {
  EXPECT_NE(error_for(R"({"bands":[{"lo_hz":1,"hi_hz":20,"max_share":0.2,"src":"x"}]})")
                .find("bands[0]: unknown field 'src'"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"bands":[{"lo_hz":20,"hi_hz":1,"max_share":0.2}]})")
                .find("hi_hz must be above lo_hz"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"bands":[{"lo_hz":1,"hi_hz":2,"max_share":1.5}]})")
                .find("bands[0].max_share: 1.5 is outside (0, 1"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"ramp":{"window_s":1,"up_max_w_per_s":1,"up_max_share_per_s":0.1}})")
                .find("both given"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"ramp":{"up_max_w_per_s":1}})").find("ramp.window_s: missing"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"range":{"window_s":-1,"max_w":1}})").find("range.window_s"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"name":"empty"})").find("no limits"), std::string::npos);
  EXPECT_NE(error_for(R"([1,2])").find("expected an object"), std::string::npos);
  EXPECT_NE(error_of([] { load_grid_spec("no-such-spec"); }).find("grid-example"),
            std::string::npos);
  // Bounded: a spec of a few limits, each printed on a line.
  json many = {{"bands", json::array()}};
  for (int i = 0; i <= 64; ++i)
    many["bands"].push_back({{"lo_hz", 1}, {"hi_hz", 2}, {"max_share", 1}});
  EXPECT_NE(error_for(many.dump()).find("bands: at most 64, found 65"), std::string::npos);
  json named = {{"name", std::string(1001, 'x')}, {"range", {{"window_s", 1}, {"max_w", 1}}}};
  EXPECT_NE(error_for(named.dump()).find("name: longer than 1000 characters"), std::string::npos);
}

}  // namespace powershape::analysis
