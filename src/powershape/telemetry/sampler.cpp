#include "powershape/telemetry/sampler.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"

namespace powershape::telemetry {
namespace {

// How often each GPU's per-process samples are asked for: once a second, as `nvidia-smi pmon`
// does by default; each call returns every sample the driver took since the last one it returned.
constexpr int64_t kProcessesEveryNs = 1'000'000'000;

}  // namespace

Sampler::Sampler(Source& source, SamplerOptions options)
    : source_(source),
      options_(options),
      sh_(std::make_shared<Shared>()),
      trackers_(source.devices().size()),
      failing_(source.devices().size()) {
  if (options_.period.count() <= 0) throw invalid_input("the sampling period must be positive");
  sh_->stuck.assign(source.devices().size(), false);
  longest_read_ns_ = options_.period.count();
  while (longest_read_ns_ * 2 <= options_.period.count() * std::max(1, options_.stretch)) {
    longest_read_ns_ *= 2;
  }
  int64_t slow_cost_ns = 0;  // every GPU's slow reads together
  for (std::size_t g = 0; g < source.devices().size(); ++g) {
    auto cost = source.read_cost_ns(static_cast<int>(g));
    SignalSet cheap;
    for (std::size_t i = 0; i < kSignalCount; ++i) {
      cheap[i] = cost[i] <= options_.slow_cost.count();
      if (!cheap[i]) slow_cost_ns += cost[i];
    }
    cheap_.push_back(cheap);
    drain_ns_.push_back(drain_every(source.buffer_ns(static_cast<int>(g))));
  }
  slow_ns_ = options_.slow_period.count();
  if (options_.slow_share > 0 && options_.slow_share <= 1) {
    const double shared = std::min(static_cast<double>(slow_cost_ns) / options_.slow_share,
                                   static_cast<double>(options_.max_slow_period.count()));
    slow_ns_ = std::max(slow_ns_, static_cast<int64_t>(shared));
  }
  read_ns_.assign(cheap_.size(), {});
  due_.assign(cheap_.size(), {});
  for (auto& r : read_ns_) r.fill(options_.period.count());
}

int64_t Sampler::drain_every(int64_t depth_ns) const {
  if (options_.drain_period.count() > 0) return options_.drain_period.count();
  if (depth_ns <= 0) return 500'000'000;
  // Late by a stalled call the watchdog has not yet given up on (its look included), the grid
  // step a due time is rounded up to, a read and a period, it still drains before the buffer
  // wraps; between half and three quarters of the depth.
  const int64_t spare = options_.stall_after.count() + watchdog_tick().count() +
                        2 * longest_read_ns_ + options_.period.count();
  return std::min({std::max(depth_ns / 2, depth_ns - spare), depth_ns / 4 * 3,
                   options_.max_drain_period.count()});
}

void Sampler::plan_reads(int64_t now) {
  const int64_t period = options_.period.count();
  std::lock_guard lock(sh_->mu);  // the trackers are fed under it
  for (std::size_t g = 0; g < read_ns_.size(); ++g) {
    for (std::size_t i = 0; i < kSignalCount; ++i) {
      // About half the update period sees every value and times each change within about half
      // a period when rounds are on time; unknown (fewer than two changes seen: a constant
      // clock, a steady temperature): the longest.
      const auto p = trackers_[g][i].median_period_ns();
      const int64_t want = p ? *p / 2 : longest_read_ns_;
      int64_t r = period;
      // 10% slack: a period measured a hair short of 8 ms still reads every 4 ms, not 2.
      while (r * 2 <= longest_read_ns_ && r * 2 <= want + want / 10) r *= 2;
      read_ns_[g][i] = r;
      due_[g][i] = std::min(due_[g][i], on_grid(now, r));
    }
  }
}

int64_t Sampler::on_grid(int64_t t, int64_t step) const {
  return t <= epoch_ns_ ? epoch_ns_ : epoch_ns_ + (t - epoch_ns_ + step - 1) / step * step;
}

int64_t Sampler::earliest_due() const {
  int64_t at = INT64_MAX;
  for (std::size_t g = 0; g < due_.size(); ++g) {
    for (std::size_t i = 0; i < kSignalCount; ++i) {
      if (cheap_[g][i]) at = std::min(at, due_[g][i]);
    }
    at = std::min({at, slow_due_[g], drain_due_[g]});
    if (options_.processes) at = std::min(at, processes_due_[g]);
  }
  return at;
}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
  {
    std::lock_guard lock(sh_->mu);
    stopping_ = false;
    watch_stop_ = false;
    finished_ = false;
    launch();
  }
  watchdog_ = std::thread([this] { watch(); });
}

void Sampler::launch() {
  const uint64_t generation = ++sh_->generation;
  thread_ = std::thread([this, sh = sh_, generation] { run(sh, generation); });
}

void Sampler::stop() {
  if (!watchdog_.joinable()) return;
  {
    std::unique_lock lock(sh_->mu);
    stopping_ = true;
    wake_.notify_all();
    // The sampling thread ends after its last round, or the watchdog gives it up.
    done_.wait(lock, [this] { return finished_; });
    watch_stop_ = true;
  }
  wake_.notify_all();
  watchdog_.join();
  if (thread_.joinable()) thread_.join();
}

void Sampler::watch() {
  const auto tick = watchdog_tick();
  std::unique_lock lock(sh_->mu);
  while (!wake_.wait_for(lock, tick, [this] { return watch_stop_; })) {
    const int64_t now = steady_now_ns();
    Shared& sh = *sh_;
    if (sh.call_start_ns == 0 || now - sh.call_start_ns <= options_.stall_after.count()) continue;
    const int g = sh.call_gpu;
    sh.stuck[static_cast<std::size_t>(g)] = true;
    sh.events.push_back({now, g,
                         "a driver call has not returned for " +
                             std::to_string((now - sh.call_start_ns) / 1'000'000) +
                             " ms; this GPU is left out until it does"});
    sh.call_start_ns = 0;
    thread_.detach();  // stuck in the driver; it ends by itself if the call ever returns
    if (stopping_) {
      ++sh.generation;
      finished_ = true;
      done_.notify_all();
    } else {
      launch();
    }
  }
}

template <class F>
Sampler::Call Sampler::call_source(Shared& sh, uint64_t generation, int g, F&& f) {
  int64_t start = 0;
  {
    std::lock_guard lock(sh.mu);
    if (sh.generation != generation) return Call::kGivenUp;
    if (sh.stuck[static_cast<std::size_t>(g)]) return Call::kSkipped;
    sh.call_gpu = g;
    sh.call_start_ns = start = steady_now_ns();
  }
  f();
  std::lock_guard lock(sh.mu);
  if (sh.generation == generation) {
    sh.call_start_ns = 0;
    return Call::kDone;
  }
  // Given up on while in the call: the GPU is sampled again by the current thread from now on.
  sh.stuck[static_cast<std::size_t>(g)] = false;
  const int64_t now = steady_now_ns();
  sh.events.push_back({now, g,
                       "the driver call returned after " +
                           std::to_string((now - start) / 1'000'000) +
                           " ms; this GPU is sampled again"});
  return Call::kGivenUp;
}

void Sampler::run(const std::shared_ptr<Shared>& sh, uint64_t generation) {
  int64_t cpu0 = thread_cpu_ns();
  int64_t t0 = steady_now_ns();
  // The first round reads and drains everything; after it, GPU g's slow reads and drains are due
  // (g + 1) / n of their periods in, so that no round does every GPU's, on the longest read's grid,
  // so that they fall in rounds that read anyway.
  epoch_ns_ = t0;
  const auto n = static_cast<int64_t>(cheap_.size());
  slow_due_.assign(cheap_.size(), 0);
  drain_due_.assign(cheap_.size(), 0);
  processes_due_.assign(cheap_.size(), t0 + kProcessesEveryNs);
  for (std::size_t g = 0; g < cheap_.size(); ++g) {
    const auto k = static_cast<int64_t>(g) + 1;
    slow_due_[g] = on_grid(t0 + slow_ns_ / n * k, longest_read_ns_);
    drain_due_[g] = on_grid(t0 + drain_ns_[g] / n * k, longest_read_ns_);
  }
  auto next = std::chrono::steady_clock::now();
  bool all = true;
  while (true) {
    if (!round(sh, generation, all)) return;  // given up on: a newer thread samples
    all = false;
    next += options_.period;
    if (options_.stretch > 1) {  // asleep until something is due: a read, a slow read, a drain
      const int64_t due = earliest_due();  // INT64_MAX: no GPU, nothing is ever due
      next =
          due == INT64_MAX
              ? next + std::chrono::nanoseconds(longest_read_ns_)
              : std::max(next, std::chrono::steady_clock::time_point(
                                   std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                       std::chrono::nanoseconds(due))));
    }
    auto now = std::chrono::steady_clock::now();
    if (now > next + options_.period) {
      std::lock_guard lock(sh_->mu);
      ++stats_.late;
      next = now;  // skip the rounds we missed rather than bursting to catch up
    }
    std::unique_lock lock(sh_->mu);
    if (wake_.wait_until(lock, next, [this] { return stopping_.load(); })) break;
  }
  // One last look at everything, so the trace ends at stop time.
  if (!round(sh, generation, true)) return;
  std::lock_guard lock(sh_->mu);
  stats_.cpu_ns += thread_cpu_ns() - cpu0;
  stats_.wall_ns += steady_now_ns() - t0;
  finished_ = true;
  done_.notify_all();
}

bool Sampler::round(const std::shared_ptr<Shared>& sh, uint64_t generation, bool all) {
  const int64_t t0 = steady_now_ns();
  std::vector<Sample> rows;
  const int n = static_cast<int>(source_.devices().size());
  // The read periods, learnt 200 ms in and every second after.
  if (options_.stretch > 1) {
    if (next_plan_ns_ == 0) next_plan_ns_ = t0 + 200'000'000;
    if (t0 >= next_plan_ns_) {
      plan_reads(t0);
      next_plan_ns_ = t0 + 1'000'000'000;
    }
  }
  // Due within half a period counts: a round wakes a little before or after its time.
  const int64_t now = t0 + options_.period.count() / 2;
  for (int g = 0; g < n; ++g) {
    const auto gi = static_cast<std::size_t>(g);
    const bool slow = all || now >= slow_due_[gi], drain = all || now >= drain_due_[gi];
    if (slow && !all) slow_due_[gi] = on_grid(now + slow_ns_, longest_read_ns_);
    if (drain && !all) drain_due_[gi] = on_grid(now + drain_ns_[gi], longest_read_ns_);
    SignalSet which = slow ? all_signals() : cheap_[gi];
    if (options_.stretch > 1) {
      for (std::size_t i = 0; i < kSignalCount; ++i) {
        if (!which[i] || !cheap_[gi][i]) continue;  // a slow signal: this is its GPU's slow round
        if (!all && now < due_[gi][i]) {
          which.reset(i);
        } else {  // the next point of its grid: signals of one read period fall in one round
          due_[gi][i] = on_grid(now + 1, read_ns_[gi][i]);
        }
      }
    }
    if (which.any()) {
      Sample polled;
      const Call c = call_source(*sh, generation, g, [&] { polled = source_.poll(g, which); });
      if (c == Call::kGivenUp) return false;  // touch nothing of this Sampler: it may be gone
      if (c == Call::kSkipped) continue;
      rows.push_back(std::move(polled));
    }
    if (options_.processes && (all || now >= processes_due_[gi])) {
      processes_due_[gi] = now + kProcessesEveryNs;
      std::vector<ProcessSample> p;
      const Call c = call_source(*sh, generation, g, [&] { p = source_.process_samples(g); });
      if (c == Call::kGivenUp) return false;
      std::lock_guard lock(sh_->mu);
      for (auto& x : p)
        if (sh_->processes.size() < options_.capacity) sh_->processes.push_back(std::move(x));
    }
    if (!drain) continue;
    std::vector<Sample> drained;
    const Call c = call_source(*sh, generation, g, [&] { drained = source_.drain(g); });
    if (c == Call::kGivenUp) return false;
    for (Sample& d : drained) rows.push_back(std::move(d));
  }
  std::vector<Event> events = source_.take_events();
  std::vector<Region> regions = source_.take_regions();
  std::lock_guard lock(sh_->mu);
  for (auto& r : regions) closed_.push_back(std::move(r));
  ++stats_.polls;
  for (const Sample& s : rows) {
    auto gi = static_cast<std::size_t>(s.gpu);
    for (std::size_t i = 0; i < kSignalCount; ++i) {
      const Reading& r = s.readings[i];
      if (r.ok()) {
        trackers_[gi][i].feed(s.t_ns, r.value);
        failing_[gi][i] = false;
      } else if (r.status != Status::kNotRead && r.status != Status::kNotSupported &&
                 !failing_[gi][i]) {
        failing_[gi][i] = true;  // record the first failure of a run, not every poll
        events.push_back({s.t_ns, s.gpu,
                          std::string(spec(static_cast<Signal>(i)).name) + ": " +
                              std::string(status_token(r.status))});
      }
    }
  }
  for (auto& e : events) sh_->events.push_back(std::move(e));
  push(rows);
  stats_.busy_ns += steady_now_ns() - t0;
  return true;
}

void Sampler::push(std::vector<Sample>& rows) {
  for (Sample& s : rows) {
    if (buffer_.size() >= options_.capacity) {
      ++stats_.dropped;
      continue;
    }
    buffer_.push_back(std::move(s));
  }
}

std::vector<Sample> Sampler::take() {
  std::lock_guard lock(sh_->mu);
  std::vector<Sample> out(std::make_move_iterator(buffer_.begin()),
                          std::make_move_iterator(buffer_.end()));
  buffer_.clear();
  return out;
}

std::vector<Event> Sampler::take_events() {
  std::lock_guard lock(sh_->mu);
  return std::exchange(sh_->events, {});
}

std::vector<ProcessSample> Sampler::take_processes() {
  std::lock_guard lock(sh_->mu);
  return std::exchange(sh_->processes, {});
}

std::vector<Region> Sampler::take_regions() {
  std::lock_guard lock(sh_->mu);
  return std::exchange(closed_, {});
}

std::optional<Region> Sampler::begin_region(const std::string& name, int gpu,
                                            std::optional<int64_t> t_ns) {
  std::lock_guard lock(sh_->mu);
  auto dropped = open_.begin({name, gpu, t_ns.value_or(steady_now_ns()), 0});
  return dropped ? std::optional<Region>(dropped->region) : std::nullopt;
}

std::vector<Region> Sampler::close_open_regions(std::optional<int64_t> t_ns) {
  std::lock_guard lock(sh_->mu);
  std::vector<Region> closed = open_.close_all(t_ns.value_or(steady_now_ns()));
  closed_.insert(closed_.end(), closed.begin(), closed.end());
  return closed;
}

std::vector<Region> Sampler::drop_open_regions() {
  std::lock_guard lock(sh_->mu);
  std::vector<Region> out;
  for (const auto& o : open_.open()) out.push_back(o.region);
  open_.clear();
  return out;
}

bool Sampler::is_open(const std::string& name) const {
  std::lock_guard lock(sh_->mu);
  return open_.is_open(name);
}

std::optional<Region> Sampler::end_region(const std::string& name, std::optional<int64_t> t_ns) {
  std::lock_guard lock(sh_->mu);
  auto o = open_.end(name, t_ns.value_or(steady_now_ns()));
  if (!o) return std::nullopt;
  closed_.push_back(o->region);
  return o->region;
}

SamplerStats Sampler::stats() const {
  std::lock_guard lock(sh_->mu);
  return stats_;
}

std::optional<int64_t> Sampler::update_period_ns(int gpu, Signal s) const {
  std::lock_guard lock(sh_->mu);
  return trackers_.at(static_cast<std::size_t>(gpu))[static_cast<std::size_t>(s)]
      .median_period_ns();
}

int64_t Sampler::read_period_ns(int gpu, Signal s) const {
  std::lock_guard lock(sh_->mu);
  return read_ns_.at(static_cast<std::size_t>(gpu))[static_cast<std::size_t>(s)];
}

std::size_t Sampler::update_count(int gpu, Signal s) const {
  std::lock_guard lock(sh_->mu);
  return trackers_.at(static_cast<std::size_t>(gpu))[static_cast<std::size_t>(s)].changes();
}

}  // namespace powershape::telemetry
