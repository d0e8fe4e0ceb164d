#include "powershape/analysis/power_stream.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "powershape/util/error.hpp"

namespace powershape::analysis {
using telemetry::Signal;

namespace {

constexpr Signal kCandidates[] = {Signal::kPowerInstant, Signal::kDriverPower, Signal::kPowerUsage,
                                  Signal::kPowerAverage};

// The median of a GPU's gaps (the lower middle one, as median_interval takes it), in ns.
uint64_t median_gap(std::vector<uint32_t>& gaps, const std::vector<uint64_t>& longer) {
  const std::size_t n = gaps.size() + longer.size();
  if (n == 0) return 0;
  const std::size_t mid = (n - 1) / 2;
  if (mid >= gaps.size()) {  // most gaps are long (a slow log): all of them, sorted
    std::vector<uint64_t> all(gaps.begin(), gaps.end());
    all.insert(all.end(), longer.begin(), longer.end());
    std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(mid), all.end());
    return all[mid];
  }
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(mid), gaps.end());
  return gaps[mid];
}

}  // namespace

void TracePowerStream::plan(const telemetry::Sample& row) {
  counts_.add(row);
  const bool fast = counts_.instant + counts_.driver > 0;
  if (fast) {  // the averages will not stand for power: their gaps go
    seen_.erase(Signal::kPowerUsage);
    seen_.erase(Signal::kPowerAverage);
  }
  for (Signal s : kCandidates) {
    if (!row[s].ok() || (fast && (s == Signal::kPowerUsage || s == Signal::kPowerAverage)))
      continue;
    auto [it, fresh] = seen_[s].try_emplace(row.gpu);
    Gpu& g = it->second;
    if (fresh || g.readings == 0) {
      g.first_ns = g.last_ns = row.t_ns;
    } else if (row.t_ns > g.last_ns) {  // a repeat of a time is no reading of its own
      const auto gap = static_cast<uint64_t>(row.t_ns - g.last_ns);
      if (gap <= std::numeric_limits<uint32_t>::max()) {
        g.gaps_ns.push_back(static_cast<uint32_t>(gap));
      } else {
        g.long_gaps_ns.push_back(gap);
      }
      g.last_ns = row.t_ns;
    } else {
      continue;
    }
    ++g.readings;
  }
}

void TracePowerStream::start(const std::vector<telemetry::DeviceInfo>& devices,
                             double most_samples) {
  signal_ = power_signal(counts_);
  out_.signal = std::string(telemetry::spec(signal_).name);
  auto& gpus = seen_[signal_];
  // A GPU read once is no series: it neither adds power nor counts as a GPU.
  std::erase_if(gpus, [](const auto& kv) { return kv.second.readings < 2; });
  if (gpus.empty()) throw invalid_input("fewer than two power readings in every source");
  double from = -INFINITY, to = INFINITY;
  const auto rel = [&](int64_t ns) { return static_cast<double>(ns - first_ns_) * 1e-9; };
  for (auto& [g, info] : gpus) {
    from = std::max(from, rel(info.first_ns));
    to = std::min(to, rel(info.last_ns));
    out_.reading_interval_s =
        std::max(out_.reading_interval_s,
                 static_cast<double>(median_gap(info.gaps_ns, info.long_gaps_ns)) * 1e-9);
    info.gaps_ns = {};
    info.long_gaps_ns = {};
    last_[g] = {};
  }
  out_.gpus = static_cast<int>(gpus.size());
  std::vector<int> used;
  for (const auto& [g, info] : gpus) used.push_back(g);
  out_.rated_w = rated_power_w(devices, used);
  const double dt = std::max(out_.reading_interval_s, 1e-3);
  out_.power = readings_grid(from, to, dt, most_samples);
}

void TracePowerStream::add(const telemetry::Sample& row) {
  if (!row[signal_].ok()) return;
  const auto it = last_.find(row.gpu);
  if (it == last_.end()) return;
  Held& h = it->second;
  const double t = static_cast<double>(row.t_ns - first_ns_) * 1e-9;
  if (h.any && !(t > h.t_s)) return;  // a repeat of a time
  if (h.any) {
    // The last reading held over [h.t_s, t), averaged into each interval of the grid it meets.
    PowerSeries& p = out_.power;
    const std::size_t n = p.w.size();
    auto i = static_cast<std::size_t>(std::max(0.0, std::floor((h.t_s - p.t0_s) / p.dt_s)));
    while (i > 0 && p.t0_s + p.dt_s * static_cast<double>(i) > h.t_s) --i;
    for (; i < n; ++i) {
      const double a = p.t0_s + p.dt_s * static_cast<double>(i), b = a + p.dt_s;
      if (a >= t) break;
      const double lo = std::max(a, h.t_s), hi = std::min(b, t);
      if (hi > lo) p.w[i] += h.w * (hi - lo) / p.dt_s;
    }
  }
  h = {true, t, static_cast<double>(row[signal_].value) * 1e-3};
}

PowerInput TracePowerStream::finish() { return std::move(out_); }

}  // namespace powershape::analysis
