#include "powershape/analysis/swing_run.hpp"

#include "powershape/analysis/swing_print.hpp"
#include "powershape/util/error.hpp"

namespace powershape::analysis {

SwingRun swing_run(const SwingRequest& q) {
  if (q.fold_ms > 0 && q.region.empty())
    throw invalid_input("fold", "folds over a region: name it (e.g. step)");
  SwingRun r;
  r.request = q;
  r.spec = load_grid_spec(q.spec);
  r.in = read_power_inputs(q.recordings, q.resolution_s, q.region);
  SwingOptions& o = r.options;
  o.ramp_window_s = q.ramp_window_s > 0 ? q.ramp_window_s : r.spec.ramp_window_s;
  o.range_window_s = q.range_window_s > 0 ? q.range_window_s : r.spec.range_window_s;
  o.segment_s = q.segment_s;
  o.rated_w = q.rated_w > 0 ? q.rated_w : r.in.rated_w;
  r.fleet = r.in.gpus;
  if (q.gpus > 0) {
    if (r.in.gpus == 0)
      throw invalid_input("gpus",
                          "a meter's CSV does not say how many GPUs it holds; it is analysed as it "
                          "is");
    o.scale = static_cast<double>(q.gpus) / r.in.gpus;
    r.fleet = q.gpus;
  }
  r.swing = analyse_swing(r.in.power, r.spec, o);
  if (q.fold_ms > 0) r.fold = fold_power(r.in.power, r.in.regions_s, q.fold_ms * 1e-3, o.scale);
  return r;
}

void print_swing_run(std::FILE* out, const SwingRun& r, const std::string& rated_hint) {
  print_swing_inputs(out, r.in, r.swing, r.request.recordings.size(), r.fleet);
  print_swing(out, r.swing, r.spec);
  if (!(r.options.rated_w > 0))
    std::fprintf(out, "(the recordings give no rated power%s)\n",
                 rated_hint.empty() ? "" : (": " + rated_hint).c_str());
  if (r.fold) print_fold(out, *r.fold, r.request.region, r.swing.dt_s);
}

nlohmann::json to_json(const SwingRun& r) {
  nlohmann::json j = to_json(r.swing);
  if (r.fold) j["fold"] = to_json(*r.fold, r.request.region);
  j["inputs"] = r.request.recordings;
  j["gpus"] = r.fleet;
  j["signal"] = r.in.signal;
  j["spec"] = {{"name", r.spec.name}, {"source", r.spec.source}};
  return j;
}

}  // namespace powershape::analysis
