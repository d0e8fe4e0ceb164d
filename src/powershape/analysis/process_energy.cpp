#include "powershape/analysis/process_energy.hpp"

#include <algorithm>
#include <map>

#include "powershape/analysis/energy.hpp"
#include "powershape/analysis/series.hpp"

namespace powershape::analysis {
namespace {

using telemetry::Signal;

// The GPU's finest power series: the driver's buffer, else its instant, else its average reading.
std::vector<Point> fine_power(const trace::Trace& t, int gpu) {
  for (Signal s : {Signal::kDriverPower, Signal::kPowerInstant, Signal::kPowerUsage}) {
    auto pts = series(t, gpu, s);
    if (!pts.empty()) return pts;
  }
  return {};
}

// The power readings that bear on [from, to): those inside, and the first after (each reading is
// the mean since the one before it).
std::vector<Point> slice(const std::vector<Point>& pts, int64_t from, int64_t to) {
  const auto by_t = [](const Point& p, int64_t x) { return p.t_ns < x; };
  auto a = std::lower_bound(pts.begin(), pts.end(), from, by_t);
  auto b = std::lower_bound(a, pts.end(), to, by_t);
  if (b != pts.end()) ++b;
  return {a, b};
}

struct Tally {
  double mj = 0, busy_pct_samples = 0;
  std::string name;
};

}  // namespace

std::vector<ProcessEnergy> process_energy(const trace::Trace& t, int64_t from_ns, int64_t to_ns,
                                          int64_t window_ns) {
  std::vector<ProcessEnergy> out;
  if (to_ns <= from_ns || window_ns <= 0) return out;
  std::map<int, std::vector<const trace::ProcessSample*>> by_gpu;
  for (const auto& p : t.processes)
    if (p.t_ns > from_ns && p.t_ns <= to_ns) by_gpu[p.gpu].push_back(&p);
  for (auto& [gpu, samples] : by_gpu) {
    std::stable_sort(samples.begin(), samples.end(),
                     [](const auto* a, const auto* b) { return a->t_ns < b->t_ns; });
    const std::vector<Point> power = fine_power(t, gpu);
    const Energy whole = window_energy(series(t, gpu, Signal::kEnergy), power, from_ns, to_ns);
    if (whole.method == Energy::Method::kNone) continue;
    std::map<int64_t, Tally> tally;
    tally[kNoProcess];
    std::size_t next = 0;
    double shaped_mj = 0;
    for (int64_t ws = from_ns; ws < to_ns; ws += window_ns) {
      const int64_t we = std::min(to_ns, ws + window_ns);
      const double mj = energy_from_power(slice(power, ws, we), ws, we).energy_mj;
      shaped_mj += mj;
      std::map<int64_t, double> sm;  // pid -> its SM percentages summed over the window
      double all = 0;
      for (; next < samples.size() && samples[next]->t_ns <= we; ++next) {
        const auto& p = *samples[next];
        sm[p.pid] += p.sm_pct;
        all += p.sm_pct;
        tally[p.pid].name = p.name.empty() ? tally[p.pid].name : p.name;
        tally[p.pid].busy_pct_samples += p.sm_pct;
      }
      if (all <= 0) {
        tally[kNoProcess].mj += mj;
        continue;
      }
      for (const auto& [pid, v] : sm) tally[pid].mj += mj * v / all;
    }
    // The windows' power integrals shape the split; the span's energy sets the total.
    const double scale = shaped_mj > 0 ? whole.energy_mj / shaped_mj : 0;
    if (shaped_mj <= 0) tally[kNoProcess].mj = whole.energy_mj;
    // The driver's sampling period (its samples of all processes share their times), for the
    // busy seconds.
    std::vector<int64_t> times;
    for (const auto* s : samples)
      if (times.empty() || s->t_ns != times.back()) times.push_back(s->t_ns);
    const double period_s = times.size() >= 2 ? static_cast<double>(times.back() - times.front()) *
                                                    1e-9 / static_cast<double>(times.size() - 1)
                                              : 0;
    for (const auto& [pid, x] : tally) {
      ProcessEnergy e;
      e.gpu = gpu;
      e.pid = pid;
      e.name = pid == kNoProcess ? "no process busy" : x.name;
      e.joules = (shaped_mj > 0 ? x.mj * scale : x.mj) * 1e-3;
      e.busy_s = x.busy_pct_samples / 100 * period_s;
      out.push_back(std::move(e));
    }
  }
  return out;
}

std::vector<ProcessEnergy> process_energy(const trace::Trace& t) {
  if (t.samples.empty()) return {};
  int64_t from = t.samples.front().t_ns, to = from;
  for (const auto& s : t.samples) {
    from = std::min(from, s.t_ns);
    to = std::max(to, s.t_ns);
  }
  return process_energy(t, from, to);
}

void ProcessEnergyTally::add(const trace::Trace& t, int64_t until_ns, bool to_the_end) {
  if (t.samples.empty()) return;
  if (!next_ns_) next_ns_ = t.samples.front().t_ns;
  int64_t last = t.samples.front().t_ns;
  for (const auto& s : t.samples) last = std::max(last, s.t_ns);
  until_ns = std::min(until_ns, last);
  if (until_ns <= *next_ns_) return;
  const int64_t end =
      to_the_end ? until_ns : *next_ns_ + (until_ns - *next_ns_) / window_ns_ * window_ns_;
  if (end <= *next_ns_) return;
  for (const auto& e : process_energy(t, *next_ns_, end, window_ns_)) {
    ProcessEnergy& x = totals_[{e.gpu, e.pid}];
    x.gpu = e.gpu;
    x.pid = e.pid;
    if (!e.name.empty()) x.name = e.name;
    x.joules += e.joules;
    x.busy_s += e.busy_s;
  }
  next_ns_ = end;
}

std::vector<ProcessEnergy> ProcessEnergyTally::totals() const {
  std::vector<ProcessEnergy> out;
  for (const auto& [key, e] : totals_) out.push_back(e);
  return out;
}

}  // namespace powershape::analysis
