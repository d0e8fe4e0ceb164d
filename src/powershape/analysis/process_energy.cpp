#include "powershape/analysis/process_energy.hpp"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>

#include "powershape/analysis/energy.hpp"
#include "powershape/analysis/series.hpp"

namespace powershape::analysis {
namespace {

using telemetry::Signal;

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
  double mj = 0, busy_s = 0;
  std::string name;
};

// The driver's sampling period on this GPU: the median time between one process's samples (its
// samples of all processes share their times); 1/6 s, NVML's usual, where no pid has two.
double sampling_period_s(const std::vector<const trace::ProcessSample*>& samples) {
  std::map<int64_t, int64_t> last;  // pid -> its last sample's time
  std::vector<int64_t> gaps;
  for (const auto* s : samples) {
    if (const auto it = last.find(s->pid); it != last.end() && s->t_ns > it->second)
      gaps.push_back(s->t_ns - it->second);
    last[s->pid] = s->t_ns;
  }
  if (gaps.empty()) return 1.0 / 6;
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                   gaps.end());
  return static_cast<double>(gaps[gaps.size() / 2]) * 1e-9;
}

}  // namespace

std::vector<ProcessEnergy> process_energy(const trace::Trace& t, int64_t from_ns, int64_t to_ns,
                                          int64_t window_ns, const std::set<int>& also) {
  std::vector<ProcessEnergy> out;
  if (to_ns <= from_ns || window_ns <= 0) return out;
  // At most kMaxWindows windows, whatever the span (a recording's times are its own: a file may
  // put its samples decades apart); the span itself in unsigned arithmetic, which cannot overflow.
  constexpr uint64_t kMaxWindows = uint64_t{1} << 20;
  const uint64_t span = static_cast<uint64_t>(to_ns) - static_cast<uint64_t>(from_ns);
  window_ns = static_cast<int64_t>(
      std::max(static_cast<uint64_t>(window_ns), (span + kMaxWindows - 1) / kMaxWindows));
  const uint64_t windows =
      (span + static_cast<uint64_t>(window_ns) - 1) / static_cast<uint64_t>(window_ns);
  std::map<int, std::vector<const trace::ProcessSample*>> by_gpu;
  for (int gpu : also) by_gpu[gpu];
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
    const double period_s = sampling_period_s(samples);
    std::size_t next = 0;
    double shaped_mj = 0;
    for (uint64_t k = 0; k < windows; ++k) {
      const int64_t ws = static_cast<int64_t>(static_cast<uint64_t>(from_ns) +
                                              k * static_cast<uint64_t>(window_ns));
      const int64_t we = k + 1 == windows ? to_ns : ws + window_ns;
      const double mj = energy_from_power(slice(power, ws, we), ws, we).energy_mj;
      shaped_mj += mj;
      std::map<int64_t, double> sm;  // pid -> its SM percentages summed over the window
      double all = 0;
      for (; next < samples.size() && samples[next]->t_ns <= we; ++next) {
        const auto& p = *samples[next];
        sm[p.pid] += p.sm_pct;
        all += p.sm_pct;
        tally[p.pid].name = p.name.empty() ? tally[p.pid].name : p.name;
        tally[p.pid].busy_s += p.sm_pct / 100.0 * period_s;
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
    for (const auto& [pid, x] : tally) {
      ProcessEnergy e;
      e.gpu = gpu;
      e.pid = pid;
      e.name = pid == kNoProcess ? "no process busy" : x.name;
      e.joules = (shaped_mj > 0 ? x.mj * scale : x.mj) * 1e-3;
      e.busy_s = x.busy_s;
      out.push_back(std::move(e));
    }
  }
  return out;
}

namespace {

// The end of a live recording that bears on the span from `from_ns` on: its rows are polls in time
// order with the driver's rows (up to its buffer, ~2.4 s, older) after each poll, so a scan back
// that stops at a row kTailSlackNs older than `from_ns` has passed every row that may be newer.
constexpr int64_t kTailSlackNs = 10'000'000'000;

trace::Trace tail_of(const trace::Trace& t, int64_t from_ns) {
  trace::Trace r;
  r.devices = t.devices;
  const int64_t stop = from_ns < INT64_MIN + kTailSlackNs ? INT64_MIN : from_ns - kTailSlackNs;
  std::size_t i = t.samples.size();
  while (i > 0 && t.samples[i - 1].t_ns >= stop) --i;
  r.samples.assign(t.samples.begin() + static_cast<std::ptrdiff_t>(i), t.samples.end());
  std::size_t j = t.processes.size();
  while (j > 0 && t.processes[j - 1].t_ns >= stop) --j;
  r.processes.assign(t.processes.begin() + static_cast<std::ptrdiff_t>(j), t.processes.end());
  return r;
}

}  // namespace

void ProcessEnergyTally::add(const trace::Trace& whole, int64_t until_ns, bool to_the_end) {
  if (whole.samples.empty()) return;
  // Only the recording's end is read: a call a second costs what the second added, not the run.
  const trace::Trace t = next_ns_ ? tail_of(whole, *next_ns_) : whole;
  if (t.samples.empty()) return;
  if (!next_ns_) next_ns_ = t.samples.front().t_ns;
  int64_t last = t.samples.front().t_ns;
  for (const auto& s : t.samples) last = std::max(last, s.t_ns);
  for (const auto& p : t.processes) seen_gpus_.insert(p.gpu);
  until_ns = std::min(until_ns, last);
  if (until_ns <= *next_ns_) return;
  const int64_t end =
      to_the_end ? until_ns
                 : static_cast<int64_t>(
                       static_cast<uint64_t>(*next_ns_) +
                       (static_cast<uint64_t>(until_ns) - static_cast<uint64_t>(*next_ns_)) /
                           static_cast<uint64_t>(window_ns_) * static_cast<uint64_t>(window_ns_));
  if (end <= *next_ns_) return;
  // A GPU that had processes once has its idle spans charged to "no process busy" since: NVML
  // gives no samples while nothing runs, and the parts must still add up to the GPU's energy.
  for (const auto& e : process_energy(t, *next_ns_, end, window_ns_, seen_gpus_)) {
    ProcessEnergy& x = totals_[{e.gpu, e.pid}];
    x.gpu = e.gpu;
    x.pid = e.pid;
    if (!e.name.empty()) x.name = e.name;
    x.joules += e.joules;
    x.busy_s += e.busy_s;
  }
  next_ns_ = end;
  fold();
}

void ProcessEnergyTally::fold() {
  // A GPU's least-charged processes beyond kMaxProcesses are kept as one "other processes" entry:
  // a days-long run of short-lived processes keeps bounded totals and series.
  std::map<int, std::vector<std::pair<double, int64_t>>> by_gpu;
  for (const auto& [key, e] : totals_)
    if (e.pid >= 0) by_gpu[key.first].push_back({e.joules, e.pid});
  for (auto& [gpu, v] : by_gpu) {
    if (v.size() <= kMaxProcesses) continue;
    std::sort(v.begin(), v.end(), std::greater<>());
    ProcessEnergy& other = totals_[{gpu, kOtherProcesses}];
    other.gpu = gpu;
    other.pid = kOtherProcesses;
    other.name = "other processes";
    for (std::size_t i = kMaxProcesses; i < v.size(); ++i) {
      const auto it = totals_.find({gpu, v[i].second});
      other.joules += it->second.joules;
      other.busy_s += it->second.busy_s;
      totals_.erase(it);
    }
  }
}

std::vector<ProcessEnergy> ProcessEnergyTally::totals() const {
  std::vector<ProcessEnergy> out;
  for (const auto& [key, e] : totals_) out.push_back(e);
  return out;
}

nlohmann::json to_json(const std::vector<ProcessEnergy>& v) {
  if (v.empty()) return nullptr;
  nlohmann::json j = nlohmann::json::array();
  for (const auto& e : v)
    j.push_back({{"gpu", e.gpu},
                 {"pid", e.pid < 0 ? nlohmann::json(nullptr) : nlohmann::json(e.pid)},
                 {"name", e.name},
                 {"joules", e.joules},
                 {"busy_s", e.busy_s}});
  return j;
}

}  // namespace powershape::analysis
