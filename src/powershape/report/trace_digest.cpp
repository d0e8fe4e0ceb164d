#include "powershape/report/trace_digest.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>

#include "powershape/analysis/power_stream.hpp"
#include "powershape/analysis/summary_stream.hpp"
#include "powershape/trace/csv_reader.hpp"
#include "powershape/util/error.hpp"

namespace powershape::report {
namespace {
using telemetry::Signal;

// Both passes over the rows; `each(f)` calls f on every row, each signal of each GPU in time order,
// and returns the trace without its rows.
// The SM-clock histogram cells the streamed summary may hold (a map node each, ~64 bytes):
// beyond, many long windows over many clocks (a small file built so), read whole instead.
constexpr std::size_t kMostClockCells = std::size_t{4} << 20;
// The swing section's grid at most: 10 ms for 3.9 days; a longer or finer series is for
// `powershape swing --resolution`.
constexpr double kMostSwingSamples = 1 << 25;

template <class EachRow>
std::optional<TraceDigest> gather(const EachRow& each, std::size_t max_bins, bool summary,
                                  std::optional<int64_t> origin_ns = std::nullopt) {
  TraceDigest d;
  analysis::SummaryPlanner planner;
  int64_t t1 = std::numeric_limits<int64_t>::min();
  std::optional<analysis::TracePowerStream> power_stream;
  d.t0_ns = std::numeric_limits<int64_t>::max();
  std::vector<int> gpus;
  d.header = each([&](const telemetry::Sample& row) {
    ++d.rows;
    d.t0_ns = std::min(d.t0_ns, row.t_ns);
    t1 = std::max(t1, row.t_ns);
    if (std::find(gpus.begin(), gpus.end(), row.gpu) == gpus.end()) gpus.push_back(row.gpu);
    planner.add(row);
    if (!power_stream) power_stream.emplace(origin_ns.value_or(row.t_ns));  // from the first row
    power_stream->plan(row);
  });
  if (d.rows == 0) throw invalid_input("the trace has no samples");
  if (!planner.in_time_order()) return std::nullopt;
  std::sort(gpus.begin(), gpus.end());
  // Bins no finer than the rows need: twice as many as there are, 2000 at least.
  d.bins = make_bins(d.t0_ns, t1, std::min(max_bins, std::max<std::size_t>(2000, 2 * d.rows)));

  std::map<std::pair<int, Signal>, ExtremeBins> extremes;
  std::map<int, FractionBins> reasons;
  for (int g : gpus) reasons.emplace(g, FractionBins(d.bins));
  std::optional<analysis::SummaryStream> stream;
  if (summary) {
    auto plan = planner.plan(d.header.regions);
    if (plan.clock_cells > kMostClockCells) return std::nullopt;
    stream.emplace(std::move(plan));
  }
  bool power = true;
  try {
    power_stream->start(d.header.devices, kMostSwingSamples);
  } catch (const std::exception& e) {
    d.no_power = e.what();
    power = false;
  }
  // A file still being written (a monitor's) has more rows the second time: those are left out.
  std::size_t second = 0;
  each([&](const telemetry::Sample& row) {
    if (++second > d.rows) return;
    for (const auto& shown : kShown) {
      const Signal s = shown.signal;
      if (!row[s].ok()) continue;
      auto it = extremes.find({row.gpu, s});
      if (it == extremes.end()) {
        const double scale = telemetry::spec(s).unit == "mW" ? 1e-3 : 1;
        it = extremes.emplace(std::pair{row.gpu, s}, ExtremeBins(d.bins, scale)).first;
      }
      it->second.add({row.t_ns, row[s].value});
    }
    const auto r =
        reasons.find(row.gpu);  // none: a GPU the first pass did not see (a file rewritten)
    if (r != reasons.end() && row[Signal::kReasons].ok())
      r->second.add({row.t_ns, row[Signal::kReasons].value});
    if (stream) stream->add(row);
    if (power) power_stream->add(row);
  });
  for (int g : gpus) {
    TraceDigest::Gpu gpu{g, {}, std::move(reasons.at(g))};
    gpu.reasons.finish();
    for (const auto& shown : kShown) {
      if (auto it = extremes.find({g, shown.signal}); it != extremes.end())
        gpu.series.push_back({shown.signal, it->second.finish()});
    }
    d.gpus.push_back(std::move(gpu));
  }
  if (stream) d.summary = stream->finish();
  if (power) d.power = power_stream->finish();
  return d;
}

}  // namespace

TraceDigest digest(const trace::Trace& t, std::size_t max_bins, bool summary) {
  if (t.samples.empty()) throw invalid_input("the trace has no samples");
  // Each signal's readings in time order: the rows sorted by time, in their order where equal.
  std::vector<std::size_t> order(t.samples.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return t.samples[a].t_ns < t.samples[b].t_ns;
  });
  const auto each = [&](const auto& f) {
    for (std::size_t i : order) f(t.samples[i]);
    trace::Trace header = t;
    header.samples.clear();
    return header;
  };
  // In memory the summary is summarize()'s own; the power counts from the file's first row.
  TraceDigest d = *gather(each, max_bins, false, t.samples.front().t_ns);
  if (summary) d.summary = analysis::summarize(t);
  return d;
}

std::optional<TraceDigest> digest_file(const std::string& path, std::size_t max_bins,
                                       bool summary) {
  const auto each = [&](const auto& f) { return trace::scan_csv(path, f); };
  try {
    return gather(each, max_bins, summary);
  } catch (const trace::OutOfOrder&) {
    return std::nullopt;
  }
}

}  // namespace powershape::report
