#pragma once
// The curve `probe` measures: square waves of compute and idle (or memory-bound) gaps at each
// period, their burst throughput, clock, capped share and power, against products back to back;
// from them the boost and sustained rates, the power window (the longest burst that runs within
// 3% of the best) and the clock controller's response to a load step.
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "powershape/experiment/backend.hpp"
#include "powershape/workload/args.hpp"

namespace powershape::experiment {

struct ProbeOptions {
  std::vector<std::string> gaps = {"idle", "memory"};  // each "idle" or "memory"
  std::vector<int> periods_ms;                         // each 1 to 3600000
  workload::WorkloadArgs workload;                     // its duty, in (0, 1)
  double window_s = 3;                                 // seconds a measurement, at least 4 periods
};

struct ProbePoint {
  std::string gap;
  double period_ms = 0;
  Measurement m;
};

struct ProbeCurve {
  double duty = 0;
  std::vector<ProbePoint> points;          // gaps, then periods, in the order asked
  Measurement sustained;                   // products back to back
  double boost_tflops = 0;                 // the best burst
  double power_window_ms = 0;              // 0: no burst ran within 3% of the best
  std::optional<double> step_response_ms;  // none: the clock never fell 5% under its maximum
};

// "idle,memory" as a list; an Error (subject "gaps") for anything else.
std::vector<std::string> parse_gaps(const std::string& text);

// An Error naming the option that is wrong ("duty", "periods", "gaps", "window"): checked before a
// device is opened, and again by probe_curve.
void check_probe_options(const ProbeOptions& o);

// Measures the curve on `b` (its configurations replaced); `each`, when set, hears of each point as
// it is measured, with how many of how many are done. Errors name the option that is wrong
// ("duty", "periods", "gaps").
ProbeCurve probe_curve(Backend& b, const ProbeOptions& o,
                       const std::function<void(const ProbePoint&, int, int)>& each = {});

// The curve as probe -o writes it and report --probe reads it.
nlohmann::json to_json(const ProbeCurve& c, const Backend& b);

}  // namespace powershape::experiment
