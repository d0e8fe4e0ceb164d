#include "sim_workload.hpp"

#include <charconv>
#include <stdexcept>

#include "powershape/sim/profile.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/plan_json.hpp"
#include "powershape/workload/timeline.hpp"

namespace powershape::cli {

void add_workload_options(CLI::App& cmd, WorkloadArgs& a) {
  cmd.add_option("--workload", a.workload, "lmhead, msm, square, PLAN.json or a kernel TIMELINE.csv (default lmhead)");
  cmd.add_option("--shape", a.shape,
                 "lmhead: N,D,V (default 16384,896,151936); msm: ROWS,D,COLS (default 65536,512,65536)");
  cmd.add_option("--chunks", a.chunks, "Row chunks (default 1)");
  cmd.add_flag("--forward-only", a.forward_only, "lmhead: the forward pass alone");
  cmd.add_option("--ce-bytes", a.ce_bytes_per_logit,
                 "lmhead: bytes the cross-entropy pass moves per logit (4: fused bf16 in place, "
                 "the default; 16 or more: an unfused fp32 path)");
  cmd.add_option("--period-ms", a.period_ms, "square: period in ms (default 50)");
  cmd.add_option("--duty", a.duty, "square: compute fraction of a period (default 0.5)");
  cmd.add_option("--gap", a.gap, "square: idle or memory (default idle)");
  cmd.add_option("--recorded-on", a.recorded_on,
                 "TIMELINE.csv: the profile of the GPU it was recorded on (default the simulated one)");
}

std::array<int64_t, 3> parse_shape(const std::string& s) {
  std::array<int64_t, 3> out{};
  std::size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    auto comma = s.find(',', start);
    if ((i < 2) != (comma != std::string::npos)) {
      throw std::runtime_error("--shape: expected three comma-separated positive integers, found '" + s + "'");
    }
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), out[static_cast<std::size_t>(i)]);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size() || out[static_cast<std::size_t>(i)] <= 0) {
      throw std::runtime_error("--shape: expected three comma-separated positive integers, found '" + s + "'");
    }
    start = comma + 1;
  }
  return out;
}

workload::Plan build_plan(const WorkloadArgs& a, double peak_flops_per_s, double peak_bytes_per_s) {
  try {
    if (a.workload == "lmhead") {
      auto s = parse_shape(a.shape.empty() ? "16384,896,151936" : a.shape);
      return workload::lmhead_plan({s[0], s[1], s[2]}, a.chunks, !a.forward_only, a.ce_bytes_per_logit);
    }
    if (a.workload == "msm") {
      auto s = parse_shape(a.shape.empty() ? "65536,512,65536" : a.shape);
      return workload::msm_plan(s[0], s[1], s[2], a.chunks);
    }
    if (a.workload == "square") {
      if (a.gap != "idle" && a.gap != "memory") throw std::runtime_error("--gap: expected idle or memory");
      return workload::square_plan(a.period_ms * 1e-3, a.duty,
                                   a.gap == "idle" ? workload::Gap::kIdle : workload::Gap::kMemory,
                                   peak_flops_per_s, peak_bytes_per_s);
    }
    if (a.workload.size() > 5 && a.workload.substr(a.workload.size() - 5) == ".json") {
      return workload::read_plan(a.workload);
    }
    if (a.workload.size() > 4 && a.workload.substr(a.workload.size() - 4) == ".csv") {
      // A recorded kernel timeline: each kernel did in its recorded time what the recording GPU
      // does at its unthrottled rates.
      if (a.recorded_on.empty()) return workload::read_timeline(a.workload, peak_flops_per_s, peak_bytes_per_s);
      const sim::Profile r = sim::load_profile(a.recorded_on);
      return workload::read_timeline(a.workload, r.flops_per_cycle * r.max_mhz * 1e6, r.mem_bandwidth_gbs * 1e9);
    }
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  throw std::runtime_error("--workload: expected lmhead, msm, square, a PLAN.json or a kernel TIMELINE.csv, found '" + a.workload + "'");
}

}  // namespace powershape::cli
