#include "powershape/analysis/summary_stream.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

namespace powershape::analysis {
using telemetry::Signal;

// Named, not anonymous: SummaryStream::Impl (declared in the header) holds these.
namespace stream_detail {

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
constexpr std::size_t kReasons = telemetry::reason::kAll.size();
// The driver's cumulative throttle-time counters a summary reads, in its order.
constexpr std::array<Signal, 3> kThrottle = {Signal::kThrottleSwPower, Signal::kThrottleSwThermal,
                                             Signal::kThrottleHwThermal};

// A counter's value at given times, as energy_from_counter takes it without a power series: from
// its edges (the readings where it changed), linear between the two around each time, extended
// from the first or last two. Fed its readings in time order; the times are known first.
class CounterAt {
 public:
  explicit CounterAt(std::vector<int64_t> at) : q_(std::move(at)), pair_(q_.size()) {}
  void add(Point p) {
    if (last_ && p.value == last_->value) return;  // not an edge
    ++edges_;
    // Each time before this edge (and not before an earlier one) lies between the last edge and
    // this one; a time before the first edge takes the first two.
    for (; edges_ >= 2 && next_ < q_.size() && q_[next_] < p.t_ns; ++next_)
      pair_[next_] = {*last_, p};
    prev_ = last_;
    last_ = p;
  }
  // Times at or after the last edge take the last two.
  void finish() {
    for (; edges_ >= 2 && next_ < q_.size(); ++next_) pair_[next_] = {*prev_, *last_};
  }
  bool known() const { return edges_ >= 2; }
  double at(int64_t t) const {
    const auto i = static_cast<std::size_t>(std::lower_bound(q_.begin(), q_.end(), t) - q_.begin());
    const auto& [a, b] = pair_[i];
    const double slope =
        static_cast<double>(b.value - a.value) / static_cast<double>(b.t_ns - a.t_ns);
    return static_cast<double>(a.value) + slope * static_cast<double>(t - a.t_ns);
  }

 private:
  std::vector<int64_t> q_;  // sorted
  std::vector<std::pair<Point, Point>> pair_;
  std::size_t next_ = 0, edges_ = 0;
  std::optional<Point> last_, prev_;
};

// The integral (mJ) of a power step function (each reading held until the next, the last for
// ever, nothing before the first) from its start to given times. Fed in time order.
class PrefixIntegral {
 public:
  explicit PrefixIntegral(std::vector<int64_t> at) : q_(std::move(at)), mj_(q_.size(), 0.0) {}
  void add(Point p) {
    if (last_) {
      settle(p.t_ns);
      sum_ += static_cast<double>(last_->value) * static_cast<double>(p.t_ns - last_->t_ns) * 1e-9;
    } else {
      for (; next_ < q_.size() && q_[next_] < p.t_ns; ++next_) mj_[next_] = 0;
    }
    last_ = p;
  }
  void finish() {
    if (last_) settle(kForever);
  }
  double at(int64_t t) const {
    return mj_[static_cast<std::size_t>(std::lower_bound(q_.begin(), q_.end(), t) - q_.begin())];
  }

 private:
  void settle(int64_t before) {
    for (; next_ < q_.size() && q_[next_] < before; ++next_)
      mj_[next_] = sum_ + static_cast<double>(last_->value) *
                              static_cast<double>(q_[next_] - last_->t_ns) * 1e-9;
  }
  std::vector<int64_t> q_;
  std::vector<double> mj_;
  std::size_t next_ = 0;
  double sum_ = 0;
  std::optional<Point> last_;
};

std::vector<int64_t> sorted_unique(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// What each window gathers as the readings go by.
struct Running {
  std::optional<int64_t> peak_mw, peak_temp_c;
  std::map<int64_t, int64_t> clock_ns;  // SM clock: time at each value, until the window ends
  std::optional<Distribution> clock;    // then its distribution, and the map freed

  void settle_clock() {
    if (clock) return;
    std::vector<Held> h;
    for (const auto& [v, ns] : clock_ns) h.push_back({v, ns});
    clock = distribution(std::move(h));
    clock_ns = {};
  }
  bool reasons_seen = false;
  int64_t reasons_covered_ns = 0;
  std::array<int64_t, kReasons> reason_on_ns{};
  // Energy: by the counter (its value at both ends, from edges bracketing each) or, for windows
  // too short for it or without one, by the finest power's integral.
  bool by_counter = false;
  std::array<std::pair<Point, Point>, 2> bracket{};  // the counter's edges around from and to
  int counter_updates = 0;
  double power_mj = 0;
};

}  // namespace stream_detail
using namespace stream_detail;

std::vector<SummaryWindow> summary_windows(const std::map<int, std::pair<int64_t, int64_t>>& extent,
                                           const std::vector<telemetry::Region>& regions) {
  std::vector<SummaryWindow> out;
  for (const auto& [g, span] : extent) out.push_back({"all", g, span.first, span.second});
  for (const auto& r : regions) {
    for (const auto& [g, span] : extent) {
      if (r.gpu < 0 || r.gpu == g) out.push_back({r.name, g, r.begin_ns, r.end_ns});
    }
  }
  return out;
}

void SummaryPlanner::add(const telemetry::Sample& row) {
  auto [ext, fresh] = extent_.try_emplace(row.gpu, row.t_ns, row.t_ns);
  ext->second.first = std::min(ext->second.first, row.t_ns);
  ext->second.second = std::max(ext->second.second, row.t_ns);
  for (const auto& sp : telemetry::signal_specs()) {
    const auto& r = row[sp.signal];
    if (!r.ok()) continue;
    const std::pair key{row.gpu, sp.signal};
    auto [last, first] = last_t_.try_emplace(key, row.t_ns);
    if (!first && row.t_ns < last->second) ordered_ = false;
    last->second = std::max(last->second, row.t_ns);
    first_t_.try_emplace(key, row.t_ns);
  }
  if (const auto& c = row[Signal::kSmClock]; c.ok() && c.value >= 0) {
    auto& seen = clocks_[row.gpu];
    const auto v =
        static_cast<std::size_t>(std::min(c.value, telemetry::spec(Signal::kSmClock).most));
    if (seen.empty())
      seen.resize(static_cast<std::size_t>(telemetry::spec(Signal::kSmClock).most) + 1);
    if (!seen[v]) {
      seen[v] = true;
      ++distinct_clocks_[row.gpu];
    }
  }
  if (const auto& e = row[Signal::kEnergy]; e.ok()) {
    auto& pts = energy_[row.gpu];
    if (pts.empty() || pts.back().value != e.value) pts.push_back({row.t_ns, e.value});
  }
}

SummaryPlan SummaryPlanner::plan(const std::vector<telemetry::Region>& regions) const {
  SummaryPlan p;
  p.windows = summary_windows(extent_, regions);
  p.energy = energy_;
  std::map<int, std::vector<std::pair<int64_t, int>>>
      edges;  // per GPU: +1 at a start, -1 at an end
  for (const auto& w : p.windows) {
    if (w.to_ns <= w.from_ns) continue;
    edges[w.gpu].push_back({w.from_ns, 1});
    edges[w.gpu].push_back({w.to_ns, -1});
  }
  for (auto& [g, e] : edges) {
    std::sort(e.begin(), e.end());  // an end before a start at the same time
    int depth = 0, most = 0;
    for (const auto& [t, d] : e) most = std::max(most, depth += d);
    const auto c = distinct_clocks_.find(g);
    p.clock_cells += static_cast<std::size_t>(most) * (c == distinct_clocks_.end() ? 0 : c->second);
  }
  for (const auto& [g, span] : extent_) {
    for (Signal s : {Signal::kDriverPower, Signal::kPowerInstant, Signal::kPowerUsage}) {
      if (auto f = first_t_.find({g, s}); f != first_t_.end()) {
        p.fine[g] = s;
        p.fine_first_ns[g] = f->second;
        break;
      }
    }
  }
  return p;
}

struct SummaryStream::Impl {
  // One signal of one GPU: the windows it feeds, those whose span its readings have reached
  // (each held reading is added to those it overlaps), and its last reading.
  struct Feed {
    Signal signal = Signal::kPowerUsage;
    std::vector<std::size_t> order;  // windows by start
    std::size_t next = 0;
    std::vector<std::size_t> active;
    std::optional<Point> last;
  };

  SummaryPlan plan;
  std::vector<Running> run;
  std::map<std::pair<int, Signal>, Feed> feeds;
  std::map<std::pair<int, Signal>, CounterAt> counters;  // throttle counters, at window ends
  std::map<int, PrefixIntegral> fine_mj;                 // per GPU, at the counter's brackets

  explicit Impl(SummaryPlan p) : plan(std::move(p)), run(plan.windows.size()) {
    std::map<int, std::vector<std::size_t>> by_gpu;
    std::map<int, std::vector<int64_t>> ends, fine_at;
    for (std::size_t i = 0; i < plan.windows.size(); ++i) {
      const auto& w = plan.windows[i];
      by_gpu[w.gpu].push_back(i);
      ends[w.gpu].insert(ends[w.gpu].end(), {w.from_ns, w.to_ns});
      plan_energy(i, fine_at[w.gpu]);
    }
    for (auto& [g, idx] : by_gpu) {
      std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        return plan.windows[a].from_ns < plan.windows[b].from_ns;
      });
      for (Signal s : {Signal::kPowerInstant, Signal::kDriverPower, Signal::kPowerUsage,
                       Signal::kSmClock, Signal::kReasons, Signal::kGpuTemp}) {
        Feed& f = feeds[{g, s}];
        f.signal = s;
        f.order = idx;
      }
      if (auto f = plan.fine.find(g); f != plan.fine.end()) feeds[{g, f->second}].order = idx;
      const auto at = sorted_unique(ends[g]);
      for (Signal s : kThrottle) counters.emplace(std::pair{g, s}, CounterAt(at));
      fine_mj.emplace(g, PrefixIntegral(sorted_unique(fine_at[g])));
    }
  }

  // window_energy's choice for window i, made before the readings go by: the counter where it
  // has two edges and the window spans five of its update spacings (or no finer power covers
  // the window's start), else the power's integral; the counter's edges around both ends.
  void plan_energy(std::size_t i, std::vector<int64_t>& fine_at) {
    const auto& w = plan.windows[i];
    Running& r = run[i];
    const auto e_it = plan.energy.find(w.gpu);
    if (e_it == plan.energy.end() || e_it->second.size() < 2 || w.to_ns <= w.from_ns) return;
    const std::vector<Point>& e = e_it->second;
    const auto first = plan.fine_first_ns.find(w.gpu);
    const bool fine_covers = first != plan.fine_first_ns.end() && first->second <= w.from_ns;
    if (fine_covers) {
      std::vector<int64_t> gaps;
      for (std::size_t k = 1; k < e.size(); ++k) gaps.push_back(e[k].t_ns - e[k - 1].t_ns);
      std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2),
                       gaps.end());
      if (w.to_ns - w.from_ns < kCounterMinSpacings * gaps[gaps.size() / 2]) return;
    }
    r.by_counter = true;
    r.counter_updates = static_cast<int>(std::count_if(e.begin(), e.end(), [&](const Point& p) {
      return p.t_ns >= w.from_ns && p.t_ns < w.to_ns;
    }));
    const std::array<int64_t, 2> ends = {w.from_ns, w.to_ns};
    for (std::size_t k = 0; k < 2; ++k) {
      auto hi = std::upper_bound(e.begin(), e.end(), ends[k],
                                 [](int64_t x, const Point& p) { return x < p.t_ns; });
      if (hi == e.begin()) hi = e.begin() + 1;
      if (hi == e.end()) hi = e.end() - 1;
      r.bracket[k] = {*(hi - 1), *hi};
      fine_at.insert(fine_at.end(), {ends[k], (hi - 1)->t_ns, hi->t_ns});
    }
  }

  // The counter's value at t between the edges a and b, spread as the finest power was.
  double counter_at(int gpu, const std::pair<Point, Point>& ab, int64_t t) const {
    const auto& [a, b] = ab;
    const double rise = static_cast<double>(b.value - a.value);
    const auto first = plan.fine_first_ns.find(gpu);
    if (first != plan.fine_first_ns.end() && first->second <= std::min(a.t_ns, t)) {
      const PrefixIntegral& I = fine_mj.at(gpu);
      const auto integral = [&](int64_t t0, int64_t t1) { return I.at(t1) - I.at(t0); };
      if (t < a.t_ns) return static_cast<double>(a.value) - integral(t, a.t_ns);
      if (t >= b.t_ns) return static_cast<double>(b.value) + integral(b.t_ns, t);
      const double whole = integral(a.t_ns, b.t_ns);
      if (whole > 0) return static_cast<double>(a.value) + rise * integral(a.t_ns, t) / whole;
    }
    const double slope = rise / static_cast<double>(b.t_ns - a.t_ns);
    return static_cast<double>(a.value) + slope * static_cast<double>(t - a.t_ns);
  }

  bool fine_seen(int gpu) const {
    const auto fine = plan.fine.find(gpu);
    if (fine == plan.fine.end()) return false;
    const auto f = feeds.find({gpu, fine->second});
    return f != feeds.end() && f->second.last.has_value();
  }

  // Calls fn(window, overlap_ns) for each window of f that [a, b) overlaps; a never decreases.
  template <class F>
  void overlapping(Feed& f, int64_t a, int64_t b, F&& fn) {
    while (f.next < f.order.size() && plan.windows[f.order[f.next]].from_ns < b)
      f.active.push_back(f.order[f.next++]);
    std::erase_if(f.active, [&](std::size_t i) {
      if (plan.windows[i].to_ns > a) return false;
      // Past its end: a window's clock histogram becomes its distribution (only the windows a
      // time spans hold one).
      if (f.signal == Signal::kSmClock) run[i].settle_clock();
      return true;
    });
    for (std::size_t i : f.active) {
      const auto& w = plan.windows[i];
      const int64_t lo = std::max(a, w.from_ns), hi = std::min(b, w.to_ns);
      if (hi > lo) fn(run[i], hi - lo);
    }
  }

  // A reading of `s` held for ns in a window.
  static void held(Running& r, Signal s, int64_t v, int64_t ns) {
    switch (s) {
      case Signal::kSmClock:
        r.clock_ns[v] += ns;
        break;
      case Signal::kReasons:
        r.reasons_seen = true;
        r.reasons_covered_ns += ns;
        for (std::size_t k = 0; k < kReasons; ++k) {
          if (static_cast<uint64_t>(v) & telemetry::reason::kAll[k].bit) r.reason_on_ns[k] += ns;
        }
        break;
      case Signal::kGpuTemp:
        r.peak_temp_c = std::max(r.peak_temp_c.value_or(std::numeric_limits<int64_t>::min()), v);
        break;
      default:  // the power signals
        r.peak_mw = std::max(r.peak_mw.value_or(0), v);
        break;
    }
  }

  // energy_from_power's share of a reading of mw over ns (for windows not by the counter).
  static void power(Running& r, int64_t mw, int64_t ns) {
    if (!r.by_counter) r.power_mj += static_cast<double>(mw) * static_cast<double>(ns) * 1e-9;
  }
};

SummaryStream::SummaryStream(SummaryPlan plan) : impl_(std::make_unique<Impl>(std::move(plan))) {}
SummaryStream::~SummaryStream() = default;

void SummaryStream::add(int gpu, Signal s, Point p) {
  Impl& m = *impl_;
  if (auto c = m.counters.find({gpu, s}); c != m.counters.end()) c->second.add(p);
  const auto fine = m.plan.fine.find(gpu);
  const bool is_fine = fine != m.plan.fine.end() && fine->second == s;
  if (is_fine) m.fine_mj.at(gpu).add(p);
  auto f = m.feeds.find({gpu, s});
  if (f == m.feeds.end()) return;
  Impl::Feed& feed = f->second;
  if (feed.last) {
    const int64_t a = feed.last->t_ns, held_v = feed.last->value;
    m.overlapping(feed, a, p.t_ns, [&](Running& r, int64_t ns) {
      Impl::held(r, s, held_v, ns);  // held() takes a reading as the value until the next
      if (is_fine) Impl::power(r, p.value, ns);  // energy_from_power as the mean since the last
    });
  } else if (is_fine) {
    // The power's first reading also covers each window's span before it.
    for (std::size_t i : feed.order) {
      const auto& w = m.plan.windows[i];
      const int64_t hi = std::min(p.t_ns, w.to_ns);
      if (hi > w.from_ns) Impl::power(m.run[i], p.value, hi - w.from_ns);
    }
  }
  feed.last = p;
}

void SummaryStream::add(const telemetry::Sample& row) {
  for (const auto& sp : telemetry::signal_specs()) {
    if (row[sp.signal].ok()) add(row.gpu, sp.signal, {row.t_ns, row[sp.signal].value});
  }
}

std::vector<Summary> SummaryStream::finish() {
  Impl& m = *impl_;
  for (auto& [key, c] : m.counters) c.finish();
  for (auto& [g, I] : m.fine_mj) I.finish();
  // Each signal's last reading holds to the end of every window; the power's covers what is left.
  for (auto& [key, f] : m.feeds) {
    if (!f.last) continue;
    const auto fine = m.plan.fine.find(key.first);
    const bool is_fine = fine != m.plan.fine.end() && fine->second == key.second;
    const int64_t v = f.last->value;
    const Signal s = key.second;
    m.overlapping(f, f.last->t_ns, kForever, [&](Running& r, int64_t ns) {
      Impl::held(r, s, v, ns);
      if (is_fine) Impl::power(r, v, ns);
    });
  }
  std::vector<Summary> out;
  for (std::size_t i = 0; i < m.plan.windows.size(); ++i) {
    const auto& w = m.plan.windows[i];
    Running& r = m.run[i];
    Summary s;
    s.name = w.name;
    s.gpu = w.gpu;
    s.begin_ns = w.from_ns;
    s.end_ns = w.to_ns;
    if (r.by_counter) {
      s.energy.method = Energy::Method::kCounter;
      s.energy.energy_mj = std::max(0.0, m.counter_at(w.gpu, r.bracket[1], w.to_ns) -
                                             m.counter_at(w.gpu, r.bracket[0], w.from_ns));
      s.energy.counter_updates = r.counter_updates;
    } else if (m.fine_seen(w.gpu) && w.to_ns > w.from_ns) {
      s.energy.method = Energy::Method::kPower;
      s.energy.energy_mj = r.power_mj;
    }
    if (s.energy.method != Energy::Method::kNone && w.to_ns > w.from_ns)
      s.avg_power_w = s.energy.energy_mj / (static_cast<double>(w.to_ns - w.from_ns) * 1e-9) * 1e-3;
    if (r.peak_mw) s.peak_power_w = static_cast<double>(*r.peak_mw) * 1e-3;
    if (s.peak_power_w && s.avg_power_w) s.peak_power_w = std::max(*s.peak_power_w, *s.avg_power_w);
    r.settle_clock();
    s.sm_clock_mhz = *r.clock;
    if (r.reasons_seen) {
      for (std::size_t k = 0; k < kReasons; ++k)
        s.reason_fraction.emplace_back(
            std::string(telemetry::reason::kAll[k].name),
            static_cast<double>(r.reason_on_ns[k]) / static_cast<double>(r.reasons_covered_ns));
    }
    std::array<std::optional<double>, kThrottle.size()> frac;
    for (std::size_t k = 0; k < kThrottle.size(); ++k) {
      const auto c = m.counters.find({w.gpu, kThrottle[k]});
      if (c == m.counters.end() || !c->second.known() || w.to_ns <= w.from_ns) continue;
      const double ns = std::max(0.0, c->second.at(w.to_ns) - c->second.at(w.from_ns));
      frac[k] = std::clamp(ns / static_cast<double>(w.to_ns - w.from_ns), 0.0, 1.0);
    }
    s.throttle_sw_power_fraction = frac[0];
    if (frac[1] || frac[2])
      s.throttle_thermal_fraction = std::max(frac[1].value_or(0), frac[2].value_or(0));
    s.peak_temp_c = r.peak_temp_c;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace powershape::analysis
