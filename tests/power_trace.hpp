#pragma once
// A one-GPU recording (an H200) of `samples` power readings of `mw` milliwatts, `step_ns` apart
// from t = first_ns: what the exporter's, the report's and the analysis' tests read.
#include <cstdint>

#include "powershape/trace/trace.hpp"

namespace powershape::testing {

inline trace::Trace power_trace(int samples, int64_t step_ns, int64_t mw, int64_t first_ns = 0) {
  trace::Trace t;
  t.devices.resize(1);
  t.devices[0].name = "NVIDIA H200";
  for (int i = 0; i < samples; ++i) {
    trace::Sample s;
    s.t_ns = first_ns + i * step_ns;
    s[telemetry::Signal::kPowerUsage] = telemetry::Reading::of(mw);
    t.samples.push_back(s);
  }
  return t;
}

}  // namespace powershape::testing
