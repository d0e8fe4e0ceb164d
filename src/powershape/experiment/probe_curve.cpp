#include "powershape/experiment/probe_curve.hpp"

#include <algorithm>

#include "powershape/experiment/engine.hpp"
#include "powershape/util/error.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::experiment {

std::vector<std::string> parse_gaps(const std::string& text) {
  std::vector<std::string> gaps;
  for (std::size_t s = 0; s <= text.size();) {
    const auto c = text.find(',', s);
    gaps.push_back(text.substr(s, c == std::string::npos ? std::string::npos : c - s));
    if (gaps.back() != "idle" && gaps.back() != "memory")
      throw invalid_input("gaps", "expected idle and/or memory");
    if (c == std::string::npos) break;
    s = c + 1;
  }
  return gaps;
}

void check_probe_options(const ProbeOptions& o) {
  if (!(o.workload.duty > 0 && o.workload.duty < 1))
    throw invalid_input("duty", "expected a fraction between 0 and 1");
  if (o.gaps.empty()) throw invalid_input("gaps", "expected idle and/or memory");
  for (const auto& g : o.gaps)
    if (g != "idle" && g != "memory") throw invalid_input("gaps", "expected idle and/or memory");
  if (o.periods_ms.empty()) throw invalid_input("periods", "expected periods of 1 to 3600000 ms");
  for (int p : o.periods_ms)
    if (p < 1 || p > 3'600'000)
      throw invalid_input("periods", "expected periods of 1 to 3600000 ms");
  if (!(o.window_s > 0 && o.window_s <= 3600))
    throw invalid_input("window", "expected seconds in (0, 3600]");
}

ProbeCurve probe_curve(Backend& b, const ProbeOptions& o,
                       const std::function<void(const ProbePoint&, int, int)>& each) {
  check_probe_options(o);
  ProbeCurve c;
  c.duty = o.workload.duty;

  // Configuration 0: products back to back; then one square wave per gap and period.
  std::vector<workload::Plan> configs;
  configs.push_back(workload::products_plan({8192}));
  for (const auto& g : o.gaps) {
    for (int p : o.periods_ms) {
      workload::WorkloadArgs w = o.workload;
      w.workload = "square";
      w.period_ms = p;
      w.gap = g;
      configs.push_back(workload::build_plan(w, 1, b.peak_rates()));
    }
  }
  b.set_configs(configs);

  c.step_response_ms = step_response_ms(b, 0);
  b.idle(2);
  c.sustained = b.measure(0, std::max(o.window_s, 5.0));
  std::size_t k = 1;
  const int total = static_cast<int>(configs.size() - 1);
  for (const auto& g : o.gaps) {
    for (int p : o.periods_ms) {
      b.idle(1);
      c.points.push_back(
          {g, static_cast<double>(p), b.measure(k, std::max(o.window_s, 4 * p * 1e-3))});
      if (each) each(c.points.back(), static_cast<int>(k), total);
      ++k;
    }
  }
  for (const auto& pt : c.points) c.boost_tflops = std::max(c.boost_tflops, pt.m.compute_tflops);
  // The power window: the longest burst that still runs within 3% of the best burst throughput,
  // with the first gap kind probed.
  for (const auto& pt : c.points) {
    if (pt.gap == o.gaps.front() && pt.m.compute_tflops >= 0.97 * c.boost_tflops)
      c.power_window_ms = std::max(c.power_window_ms, pt.period_ms * c.duty);
  }
  return c;
}

nlohmann::json to_json(const ProbeCurve& c, const Backend& b) {
  nlohmann::json j = {{"backend", b.describe()},
                      {"device", b.device_json()},
                      {"duty", c.duty},
                      {"boost_tflops", c.boost_tflops},
                      {"sustained_tflops", c.sustained.compute_tflops},
                      {"sustained_to_boost", c.sustained.compute_tflops / c.boost_tflops},
                      {"power_window_ms", c.power_window_ms}};
  j["step_response_ms"] =
      c.step_response_ms ? nlohmann::json(*c.step_response_ms) : nlohmann::json(nullptr);
  j["points"] = nlohmann::json::array();
  for (const auto& pt : c.points) {
    j["points"].push_back({{"gap", pt.gap},
                           {"period_ms", pt.period_ms},
                           {"burst_tflops", pt.m.compute_tflops},
                           {"sm_clock_mhz", pt.m.sm_clock_mhz},
                           {"power_capped", pt.m.power_capped},
                           {"avg_power_w", pt.m.avg_power_w}});
  }
  return j;
}

}  // namespace powershape::experiment
