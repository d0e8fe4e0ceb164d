#include "powershape/telemetry/sampler.hpp"

#include <algorithm>
#include <ctime>
#include <utility>

#include "powershape/telemetry/clock.hpp"

namespace powershape::telemetry {
namespace {

int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

Sampler::Sampler(Source& source, SamplerOptions options)
    : source_(source),
      options_(options),
      trackers_(source.devices().size()),
      failing_(source.devices().size()) {
  for (std::size_t g = 0; g < source.devices().size(); ++g) {
    auto cost = source.read_cost_ns(static_cast<int>(g));
    SignalSet cheap;
    for (std::size_t i = 0; i < kSignalCount; ++i) cheap[i] = cost[i] <= options_.slow_cost.count();
    cheap_.push_back(cheap);
  }
}

Sampler::~Sampler() { stop(); }

void Sampler::start() {
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void Sampler::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Sampler::run() {
  int64_t cpu0 = thread_cpu_ns();
  int64_t t0 = steady_now_ns();
  auto next = std::chrono::steady_clock::now();
  auto next_drain = next, next_slow = next;
  while (true) {
    bool drain = next >= next_drain, slow = next >= next_slow;
    if (drain) next_drain = next + options_.drain_period;
    if (slow) next_slow = next + options_.slow_period;
    round(drain, slow);
    next += options_.period;
    auto now = std::chrono::steady_clock::now();
    if (now > next + options_.period) {
      std::lock_guard lock(mu_);
      ++stats_.late;
      next = now;  // skip the rounds we missed rather than bursting to catch up
    }
    std::unique_lock lock(mu_);
    if (wake_.wait_until(lock, next, [this] { return stopping_.load(); })) break;
  }
  round(true, true);  // one last look at everything, so the trace ends at stop time
  std::lock_guard lock(mu_);
  stats_.cpu_ns = thread_cpu_ns() - cpu0;
  stats_.wall_ns = steady_now_ns() - t0;
}

void Sampler::round(bool drain, bool slow) {
  const int64_t t0 = steady_now_ns();
  std::vector<Sample> rows;
  const int n = static_cast<int>(source_.devices().size());
  for (int g = 0; g < n; ++g) {
    const SignalSet& cheap = cheap_[static_cast<std::size_t>(g)];
    rows.push_back(source_.poll(g, slow ? all_signals() : cheap));
    if (!drain) continue;
    for (Sample& d : source_.drain(g)) rows.push_back(std::move(d));
  }
  std::vector<Event> events = source_.take_events();
  std::lock_guard lock(mu_);
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
  for (auto& e : events) events_.push_back(std::move(e));
  push(rows);
  stats_.busy_ns += steady_now_ns() - t0;
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
  std::lock_guard lock(mu_);
  std::vector<Sample> out(std::make_move_iterator(buffer_.begin()),
                          std::make_move_iterator(buffer_.end()));
  buffer_.clear();
  return out;
}

std::vector<Event> Sampler::take_events() {
  std::lock_guard lock(mu_);
  return std::exchange(events_, {});
}

std::vector<Region> Sampler::take_regions() {
  std::lock_guard lock(mu_);
  return std::exchange(closed_, {});
}

void Sampler::begin_region(const std::string& name, int gpu, std::optional<int64_t> t_ns) {
  std::lock_guard lock(mu_);
  open_.push_back({name, gpu, t_ns.value_or(steady_now_ns()), 0});
}

std::vector<Region> Sampler::close_open_regions(std::optional<int64_t> t_ns) {
  std::lock_guard lock(mu_);
  std::vector<Region> closed = std::exchange(open_, {});
  for (auto& r : closed) {
    r.end_ns = std::max(r.begin_ns, t_ns.value_or(steady_now_ns()));
    closed_.push_back(r);
  }
  return closed;
}

bool Sampler::end_region(const std::string& name, std::optional<int64_t> t_ns) {
  std::lock_guard lock(mu_);
  for (auto it = open_.rbegin(); it != open_.rend(); ++it) {
    if (it->name != name) continue;
    Region r = *it;
    r.end_ns = t_ns.value_or(steady_now_ns());
    open_.erase(std::next(it).base());
    closed_.push_back(std::move(r));
    return true;
  }
  return false;
}

SamplerStats Sampler::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::optional<int64_t> Sampler::update_period_ns(int gpu, Signal s) const {
  std::lock_guard lock(mu_);
  return trackers_.at(static_cast<std::size_t>(gpu))[static_cast<std::size_t>(s)]
      .median_period_ns();
}

std::size_t Sampler::update_count(int gpu, Signal s) const {
  std::lock_guard lock(mu_);
  return trackers_.at(static_cast<std::size_t>(gpu))[static_cast<std::size_t>(s)].changes();
}

}  // namespace powershape::telemetry
