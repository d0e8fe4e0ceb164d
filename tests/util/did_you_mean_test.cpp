#include "powershape/util/did_you_mean.hpp"

#include <gtest/gtest.h>

namespace powershape::util {

TEST(DidYouMean, NamesTheNearestWordWithinItsBudget) {
  const std::vector<std::string> subs{"devices", "monitor", "mark",     "sim",    "repro", "probe",
                                      "tune",    "compare", "exporter", "report", "advise"};
  EXPECT_EQ(closest("moniter", subs), "monitor");
  EXPECT_EQ(closest("rpero", subs), "repro");  // a swap is one edit
  EXPECT_EQ(closest("advice", subs), "advise");
  EXPECT_EQ(closest("exp", subs), "exporter");  // the one word it begins
  EXPECT_EQ(closest("bogus", subs), "");        // nothing close
  EXPECT_EQ(closest("", subs), "");
}

TEST(DidYouMean, OptionsWithTheirDashes) {
  const std::vector<std::string> opts{"--chunks", "--shape", "--seconds", "--seed", "--step-ms"};
  EXPECT_EQ(closest("--chunk", opts), "--chunks");
  EXPECT_EQ(closest("--chucks", opts), "--chunks");
  EXPECT_EQ(closest("--shpae", opts), "--shape");
  EXPECT_EQ(closest("--se", opts), "");  // the start of several: no single suggestion
  EXPECT_EQ(closest(std::string(1000, 'x'), opts), "");
}

}  // namespace powershape::util
