// libFuzzer target: kernel timelines (Nsight Systems CSV or start_ns,duration_ns,name) as plans.
#include <sstream>

#include "fuzz_input.hpp"
#include "powershape/workload/timeline.hpp"

using namespace powershape;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::text_of(data, size);
  fuzz::expect_clean([&] {
    std::istringstream in(text);
    workload::plan_from_timeline(in, "fuzz.csv", 989e12, 4.8e12);
  });
  return 0;
}
