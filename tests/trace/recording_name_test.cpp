#include "powershape/trace/recording_name.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "powershape/trace/open_source.hpp"

namespace powershape::trace {

// The shipped recordings by name, from any folder (an installed powershape run anywhere); a file
// that exists is itself; anything else is left for the reader to refuse.
TEST(RecordingName, ShippedRecordingsResolveFromAnyFolder) {
  const auto here = std::filesystem::current_path();
  std::filesystem::current_path(std::filesystem::temp_directory_path());
  const std::string p = recording_path("h200/gemm_sustained");
  EXPECT_TRUE(p.ends_with("data/h200/gemm_sustained_trace.csv")) << p;
  EXPECT_TRUE(std::filesystem::is_regular_file(p)) << p;
  EXPECT_TRUE(recording_path("h200/gemm_sustained_trace.csv")
                  .ends_with("data/h200/gemm_sustained_trace.csv"));
  EXPECT_EQ(recording_path("nothing/named/so"), "nothing/named/so");
  EXPECT_NE(recording_names().find("h200/gemm_sustained"), std::string::npos);
  EXPECT_EQ(open_source("fake:h200/gemm_sustained", {})->devices().size(), 1u);
  std::filesystem::current_path(here);
}

}  // namespace powershape::trace
