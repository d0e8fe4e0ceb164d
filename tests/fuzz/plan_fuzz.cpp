// libFuzzer target: plan files (JSON) and the workload options' plan builder. An input that is
// JSON is a plan file; any other is four lines of options: workload, shape, chunks, and
// "PERIOD_MS DUTY" for a square wave.
#include <sstream>

#include "fuzz_input.hpp"
#include "powershape/workload/args.hpp"
#include "powershape/workload/plan_json.hpp"

using namespace powershape;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::text_of(data, size);
  if (auto j = fuzz::json_of(text)) {
    fuzz::expect_clean([&] { workload::plan_from_json(*j); });
    return 0;
  }
  std::istringstream in(text);
  workload::WorkloadArgs a;
  std::string timing;
  std::getline(in, a.workload);
  std::getline(in, a.shape);
  std::getline(in, a.chunks);
  std::getline(in, timing);
  if (a.workload != "lmhead" && a.workload != "msm" && a.workload != "square") return 0;  // files
  std::istringstream(timing) >> a.period_ms >> a.duty;
  fuzz::expect_clean([&] { workload::build_plans(a, {989e12, 4.8e12}); });
  return 0;
}
