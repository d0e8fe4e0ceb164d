#include "powershape/experiment/smooth_run.hpp"

#include <stdexcept>

#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/swing_print.hpp"
#include "powershape/experiment/gpu_plugin.hpp"
#include "powershape/trace/open_source.hpp"

namespace powershape::experiment {

SmoothedJob smooth(const SmoothRequest& q, const std::function<void(const std::string&)>& say) {
  SmoothedJob s;
  s.spec = analysis::load_grid_spec(q.spec);
  const shape::Floor floor = shape::parse_floor(q.floor);
  auto source = trace::open_source("nvml", {q.gpu});
  shape::SmoothJob job;
  job.command = q.command;
  job.gap_region = q.gap;
  job.csv = q.csv;
  job.floor.floor_w = shape::floor_watts(floor, source->devices().at(0));
  job.floor.ramp_w_per_s = q.ramp_w_per_s;
  job.floor.back_off_w = q.back_off_w;
  job.floor.marked = !q.gap.empty();
  job.pace = q.pace;
  job.ramp_window_s = s.spec.ramp_window_s;
  job.interval_ms = q.interval_ms;
  const std::string uuid = source->devices().at(0).uuid;
  const auto quiet = [](const std::string&) {};
  s.run = shape::smooth_job(
      *source, [&] { return open_gpu_filler(uuid); }, job,
      say ? say : std::function<void(const std::string&)>(quiet));
  s.floor = job.floor;
  s.pace = q.pace;
  const trace::Trace& t = s.run.trace;
  if (t.samples.empty()) return s;
  const analysis::PowerInput in =
      analysis::trace_power(t, t.samples.front().t_ns, t.samples.back().t_ns, 0);
  try {
    s.swing =
        analysis::analyse_swing(in.power, s.spec, analysis::swing_options(s.spec, in.rated_w));
  } catch (const std::runtime_error& e) {
    s.swing_error = e.what();
  }
  return s;
}

void print_smoothed_job(std::FILE* out, const SmoothedJob& s) {
  shape::print_smoothed(out, s.run.result, s.floor, s.pace);
  if (s.swing)
    analysis::print_swing(out, *s.swing, s.spec);
  else if (!s.swing_error.empty())
    std::fprintf(out, "swing    not analysed: %s\n", s.swing_error.c_str());
}

}  // namespace powershape::experiment
