#include "powershape/analysis/phases.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "powershape/analysis/energy.hpp"
#include "powershape/analysis/series.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/printable.hpp"

namespace powershape::analysis {
using telemetry::Signal;

std::string to_string(PhaseClass c) {
  switch (c) {
    case PhaseClass::kIdle:
      return "idle";
    case PhaseClass::kCompute:
      return "compute-bound";
    case PhaseClass::kMemory:
      return "memory-bound";
    case PhaseClass::kBursty:
      return "bursty";
  }
  return "?";
}

namespace {

// Time-weighted mean of a signal over a window; -1 where it has no reading.
double mean_over(const std::vector<Point>& pts, int64_t from, int64_t to) {
  const Distribution d = distribution(held(pts, from, to));
  return d.covered_ns > 0 ? d.mean : -1;
}

// std / mean of the readings taken inside [from, to).
double spread(const std::vector<Point>& pts, int64_t from, int64_t to) {
  auto lo = std::lower_bound(pts.begin(), pts.end(), from,
                             [](const Point& p, int64_t t) { return p.t_ns < t; });
  double n = 0, sum = 0, sq = 0;
  for (auto it = lo; it != pts.end() && it->t_ns < to; ++it) {
    const double v = static_cast<double>(it->value);
    n += 1;
    sum += v;
    sq += v * v;
  }
  if (n < 3 || sum <= 0) return 0;
  const double mean = sum / n;
  return std::sqrt(std::max(0.0, sq / n - mean * mean)) / mean;
}

}  // namespace

std::vector<PhaseWindow> classify_phases(const trace::Trace& t, int gpu, const PhaseOptions& o,
                                         int64_t from_ns, int64_t to_ns) {
  if (!(o.window_s >= 0.01 && o.window_s <= 3600))
    throw invalid_input("phase window: expected 10 ms to 1 h, got " + util::printable(o.window_s) +
                        " s");
  // The finest power series the trace has: the driver's 50 Hz buffer, else the polls.
  std::vector<Point> fine = series(t, gpu, Signal::kDriverPower);
  if (fine.size() < 2) fine = series(t, gpu, Signal::kPowerInstant);
  if (fine.size() < 2) fine = series(t, gpu, Signal::kPowerUsage);
  if (fine.size() < 2)
    throw invalid_input("GPU " + std::to_string(gpu) + " has too few power readings");
  const auto counter = series(t, gpu, Signal::kEnergy);
  const auto clock = series(t, gpu, Signal::kSmClock);
  const auto util = series(t, gpu, Signal::kUtilGpu);
  const auto util_mem = series(t, gpu, Signal::kUtilMem);
  const auto reasons = series(t, gpu, Signal::kReasons);
  const auto memory_power = series(t, gpu, Signal::kMemoryPower);
  if (from_ns == 0 && to_ns == 0) {
    from_ns = fine.front().t_ns;
    to_ns = fine.back().t_ns;
  }
  const auto step = static_cast<int64_t>(o.window_s * 1e9);
  std::vector<PhaseWindow> out;
  for (int64_t b = from_ns; b < to_ns; b += step) {
    int64_t e = std::min(to_ns, b + step);
    if (to_ns - e < step / 2) e = to_ns;  // a short tail joins this window
    PhaseWindow w;
    w.begin_ns = b;
    w.end_ns = e;
    const Energy en = window_energy(counter, fine, b, e);
    w.energy_j = en.energy_mj * 1e-3;
    w.power_w = w.seconds() > 0 ? w.energy_j / w.seconds() : 0;
    w.power_cv = spread(fine, b, e);
    w.sm_clock_mhz = mean_over(clock, b, e);
    w.util_gpu_pct = mean_over(util, b, e);
    w.util_mem_pct = mean_over(util_mem, b, e);
    const double mem_mw = mean_over(memory_power, b, e);
    w.memory_power_w = mem_mw >= 0 ? mem_mw * 1e-3 : -1;
    if (!reasons.empty()) {
      int64_t capped = 0, covered = 0;
      for (const Held& h : held(reasons, b, e)) {
        covered += h.duration_ns;
        if ((static_cast<uint64_t>(h.value) & telemetry::reason::kSwPowerCap) != 0)
          capped += h.duration_ns;
      }
      w.power_capped = covered > 0 ? static_cast<double>(capped) / static_cast<double>(covered) : 0;
    }
    out.push_back(w);
    if (e == to_ns) break;
  }
  // Idle by utilisation where the trace has it, else by power near the trace's floor.
  double floor_w = 1e300, limit_w = 0;
  for (const auto& w : out) floor_w = std::min(floor_w, w.power_w);
  const auto& dev = t.devices.size() > static_cast<std::size_t>(gpu)
                        ? t.devices[static_cast<std::size_t>(gpu)]
                        : telemetry::DeviceInfo{};
  if (dev.enforced_power_limit_mw.ok()) limit_w = dev.enforced_power_limit_mw.value * 1e-3;
  for (const auto& w : out) limit_w = std::max(limit_w, w.power_w);
  const double idle_below_w = floor_w + o.idle_power_share * (limit_w - floor_w);
  for (auto& w : out) {
    const bool idle =
        w.util_gpu_pct >= 0 ? w.util_gpu_pct < o.idle_util_pct : w.power_w < idle_below_w;
    if (idle)
      w.cls = PhaseClass::kIdle;
    else if (w.power_cv >= o.bursty_cv)
      w.cls = PhaseClass::kBursty;
    else if (w.util_mem_pct >=
             (w.power_capped < o.capped_share ? o.memory_util_pct : o.stream_util_pct))
      w.cls = PhaseClass::kMemory;
    else
      w.cls = PhaseClass::kCompute;
  }
  return out;
}

std::vector<PhaseShare> phase_shares(const std::vector<PhaseWindow>& w) {
  std::vector<PhaseShare> out;
  for (int c = 0; c < kPhaseClassCount; ++c) out.push_back({static_cast<PhaseClass>(c)});
  for (const auto& x : w) {
    auto& s = out[static_cast<std::size_t>(x.cls)];
    ++s.windows;
    s.seconds += x.seconds();
    s.energy_j += x.energy_j;
  }
  return out;
}

}  // namespace powershape::analysis
