#include "powershape/experiment/open_backend.hpp"

#include <gtest/gtest.h>

#include "experiment/fake_backend.hpp"
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

// A fine-tune is a simulated device's workload: on a GPU it is refused, naming the workload.
TEST(OpenBackend, AFineTuneIsRefusedOnAGpu) {
  class OnGpu : public FakeBackend {
   public:
    OnGpu() : FakeBackend({1}, 0, 1) {}
    bool simulated() const override { return false; }
  } gpu;
  FakeBackend sim({1}, 0, 1);
  EXPECT_NO_THROW(refuse_finetune_on_gpu("finetune:qwen2-0.5b", sim));
  EXPECT_NO_THROW(refuse_finetune_on_gpu("lmhead", gpu));
  try {
    refuse_finetune_on_gpu("finetune:qwen2-0.5b", gpu);
    ADD_FAILURE() << "a fine-tune ran on a GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.subject(), "workload");
  }
}

}  // namespace
}  // namespace powershape::experiment
