#include "powershape/experiment/probe_record.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "powershape/experiment/sim_backend.hpp"
#include "powershape/util/error.hpp"

namespace powershape::experiment {

// A small recording on the simulated H200: the trace, the conditions and the kernel times in a
// new folder, progress reported per condition; a folder that holds files is refused.
TEST(ProbeRecord, RecordsIntoANewFolderAndRefusesAFullOne) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("powershape_record_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  SimBackend b(sim::load_profile("h200"), {});
  RecordPlan rp;
  rp.periods_ms = {50};
  rp.gaps = {"idle"};
  rp.duties = {0.5};
  rp.window_s = 0.2;
  rp.sustained_s = 0.5;
  rp.chunks = {1};
  rp.kernel_iterations = 1;
  int last = 0, total = 0;
  rp.progress = [&](int done, int of, double) {
    last = done;
    total = of;
  };
  EXPECT_GT(record_probe(b, rp, dir.string()), 0);
  for (const char* f : {"trace.csv", "conditions.json", "kernels.csv"})
    EXPECT_TRUE(std::filesystem::exists(dir / f)) << f;
  EXPECT_EQ(last, total);
  EXPECT_EQ(total, 1 + 2 + 3);  // one square wave, idle and sustained, three kernel workloads
  try {
    record_probe(b, rp, dir.string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.subject(), "record");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace powershape::experiment
