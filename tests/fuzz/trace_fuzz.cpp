// libFuzzer target: the trace readers (powershape's CSV, nvidia-smi's logs, JSON) and replay of
// what they accept. What a reader accepts is held to the physics the readers promise: no reading
// beyond any GPU (SignalSpec::most), no negative power, energy or clock (a bitmask's top bit reads
// negative, a temperature may be), and an energy counter
// that never goes back nor climbs faster than the most power there is, so that nothing
// downstream (report, advise, swing) can be handed a petawatt.
#include <cstdlib>
#include <map>
#include <sstream>

#include "fuzz_input.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/trace/json_file.hpp"
#include "powershape/trace/replay_source.hpp"

using namespace powershape;
using telemetry::Signal;

namespace {

void expect_physical(const trace::Trace& t) {
  const int64_t most_mw = telemetry::spec(Signal::kPowerUsage).most;
  std::map<int, std::multimap<int64_t, int64_t>> energy;  // per GPU, by time: the counter
  for (const auto& s : t.samples) {
    for (const auto& sp : telemetry::signal_specs()) {
      const auto& r = s[sp.signal];
      if (!r.ok()) continue;
      const bool may_be_negative =
          sp.signal == Signal::kGpuTemp || sp.signal == Signal::kMemTemp || sp.unit == "bitmask";
      if (r.value > sp.most || (r.value < 0 && !may_be_negative)) std::abort();
    }
    if (s[Signal::kEnergy].ok()) energy[s.gpu].emplace(s.t_ns, s[Signal::kEnergy].value);
  }
  for (const auto& [gpu, counter] : energy) {
    for (auto it = counter.begin(), prev = it++; it != counter.end(); prev = it++) {
      const long double step = static_cast<long double>(it->second) - prev->second;
      const long double dt_s = static_cast<long double>(it->first - prev->first) * 1e-9L;
      if (step < 0 || step > static_cast<long double>(most_mw) * (dt_s + 1.0L)) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = fuzz::text_of(data, size);
  fuzz::expect_clean([&] {
    std::istringstream in(text);
    trace::Trace t = trace::read_csv(in, "fuzz.csv");
    expect_physical(t);
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
