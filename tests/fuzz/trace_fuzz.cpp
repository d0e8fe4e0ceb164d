// libFuzzer target: the trace readers (CSV and JSON) and replay of what they accept.
#include <sstream>

#include "fuzz_input.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/json_file.hpp"
#include "powershape/trace/replay_source.hpp"

using namespace powershape;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::text_of(data, size);
  fuzz::expect_clean([&] {
    std::istringstream in(text);
    trace::Trace t = trace::read_csv(in, "fuzz.csv");
    // Replay at a speed that reaches the end at once: every row is polled and drained.
    trace::ReplaySource replay(std::move(t), "fuzz", 1e12);
    for (int g = 0; g < static_cast<int>(replay.devices().size()); ++g) {
      replay.poll(g, telemetry::all_signals());
      replay.drain(g);
    }
  });
  if (auto j = fuzz::json_of(text)) {
    fuzz::expect_clean([&] { trace::json_file_from(*j, "fuzz.json"); });
  }
  return 0;
}
