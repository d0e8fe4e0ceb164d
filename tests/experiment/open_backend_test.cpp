#include "powershape/experiment/open_backend.hpp"

#include <gtest/gtest.h>

#include "powershape/util/error.hpp"

namespace powershape::experiment {
namespace {

using Kind = DeviceSpec::Kind;

// One reading of --device for every subcommand that takes one (repro, probe, tune, advise, sim).
TEST(ParseDevice, EachSpellingAndOnlyThose) {
  EXPECT_EQ(parse_device("").kind, Kind::kAuto);
  EXPECT_EQ(parse_device("gpu").kind, Kind::kGpu);
  EXPECT_EQ(parse_device("sim").kind, Kind::kSim);
  EXPECT_EQ(parse_device("sim").profile, "h200");
  EXPECT_EQ(parse_device("sim:dgx-spark").profile, "dgx-spark");
  EXPECT_EQ(parse_device("sim:/tmp/my card.json").profile, "/tmp/my card.json");
  for (const char* bad : {"sim:", "simh200", "sim-h200", "GPU", "gpu0", "cpu", " sim"}) {
    try {
      parse_device(bad);
      ADD_FAILURE() << "'" << bad << "' was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidInput) << bad;
      EXPECT_EQ(e.subject(), "device") << bad;
    }
  }
}

}  // namespace
}  // namespace powershape::experiment
