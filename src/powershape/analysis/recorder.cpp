#include "powershape/analysis/recorder.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"

namespace powershape::analysis {
namespace {

// Telemetry kept before the earliest open region: the energy counter's edges before a window
// place its first update.
constexpr int64_t kMarginNs = 10'000'000'000;
// How far a region's time may lie before the recording began or after now: a clock read in
// another process a moment apart, not a window no telemetry covers or one never reached.
constexpr int64_t kSlackNs = 1'000'000'000;

}  // namespace

Recorder::Recorder(std::unique_ptr<telemetry::Source> source, telemetry::SamplerOptions o)
    : source_(std::move(source)), options_(o), sampler_(*source_, o) {
  if (source_->devices().empty())
    throw invalid_input(source_->describe() + ": no devices to record");
  trace_.source = source_->describe();
  trace_.devices = source_->devices();
  opened_ns_ = telemetry::steady_now_ns();
  sampler_.start();
  // Often enough that the sampler's buffer is at most a quarter full between collections.
  const auto every =
      std::clamp<std::chrono::nanoseconds>(o.period * static_cast<int64_t>(o.capacity) / 4,
                                           std::chrono::milliseconds(1), std::chrono::seconds(1));
  collector_ = std::thread([this, every] {
    std::unique_lock lock(mu_);
    while (!wake_.wait_for(lock, every, [this] { return stopping_; })) collect();
  });
}

Recorder::~Recorder() { stop(); }

const std::vector<telemetry::DeviceInfo>& Recorder::devices() const { return trace_.devices; }

void Recorder::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (collector_.joinable()) collector_.join();
  sampler_.stop();
}

void Recorder::collect() {
  for (auto& s : sampler_.take()) trace_.samples.push_back(std::move(s));
  int64_t keep_from = trace_.samples.empty() ? 0 : trace_.samples.back().t_ns - kMarginNs;
  for (const auto& o : open_.open()) keep_from = std::min(keep_from, o.region.begin_ns - kMarginNs);
  for (const int64_t b : closing_) keep_from = std::min(keep_from, b - kMarginNs);
  auto first_kept = std::find_if(trace_.samples.begin(), trace_.samples.end(),
                                 [&](const telemetry::Sample& s) { return s.t_ns >= keep_from; });
  trace_.samples.erase(trace_.samples.begin(), first_kept);
}

void Recorder::check_time(int64_t t_ns) const {
  if (t_ns < opened_ns_ - kSlackNs) {
    throw invalid_input("t_ns", std::to_string(t_ns) + " is before the recording began (" +
                                    std::to_string(opened_ns_) + " ns, CLOCK_MONOTONIC)");
  }
  if (t_ns > telemetry::steady_now_ns() + kSlackNs)
    throw invalid_input("t_ns", std::to_string(t_ns) + " is in the future (CLOCK_MONOTONIC)");
}

void Recorder::begin(const std::string& name, int64_t t_ns) {
  if (auto why = telemetry::region_name_problem(name); !why.empty()) throw invalid_input(why);
  check_time(t_ns);
  std::lock_guard lock(mu_);
  if (open_.size() >= Open::kMaxOpen)
    throw invalid_input("region '" + name + "': " + std::to_string(Open::kMaxOpen) +
                        " regions are open (begun, never ended); end one first");
  open_.begin({name, -1, t_ns, 0}, rapl_.read());
}

std::vector<Summary> Recorder::end(const std::string& name, int64_t t_ns) {
  check_time(t_ns);
  telemetry::Region r;
  std::vector<std::optional<double>> cpu;
  {
    std::lock_guard lock(mu_);
    const auto cpu_now = rapl_.read();
    const auto* o = open_.find(name);
    if (o == nullptr) throw invalid_input("no region '" + name + "' is open");
    if (t_ns < o->region.begin_ns)
      throw invalid_input("region '" + name + "' would end before it began");
    auto closed = *open_.end(name, t_ns);
    r = closed.region;
    cpu = rapl_.joules(closed.extra, cpu_now);
    closing_.insert(r.begin_ns);  // its telemetry kept until it is summed up below
  }
  struct Unpin {  // on the way out, after the last lock below is let go
    Recorder& rec;
    int64_t begin_ns;
    ~Unpin() {
      std::lock_guard lock(rec.mu_);
      rec.closing_.erase(rec.closing_.find(begin_ns));
    }
  } unpin{*this, r.begin_ns};
  // Wait (at most 20 periods) for a round of polls after the end, so the window is covered.
  for (int i = 0; i < 20; ++i) {
    {
      std::lock_guard lock(mu_);
      collect();
      if (!trace_.samples.empty() && trace_.samples.back().t_ns > t_ns) break;
    }
    std::this_thread::sleep_for(options_.period);
  }
  std::lock_guard lock(mu_);
  std::vector<Summary> out;
  for (int g = 0; g < static_cast<int>(trace_.devices.size()); ++g) {
    out.push_back(summarize(trace_, g, name, r.begin_ns, r.end_ns));
  }
  // A name each step ("step 1", "step 2", ...) must not grow the record of the last without
  // bound: past kMaxNames names, the one that ended longest ago goes.
  if (last_.size() >= kMaxNames && last_.count(name) == 0) {
    last_.erase(std::min_element(last_.begin(), last_.end(), [](const auto& a, const auto& b) {
      return a.second.seq < b.second.seq;
    }));
  }
  last_[name] = {++ended_, out, std::move(cpu)};
  return out;
}

std::vector<std::optional<double>> Recorder::last_cpu_energy(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = last_.find(name);
  return it == last_.end() ? std::vector<std::optional<double>>{} : it->second.cpu;
}

std::vector<Summary> Recorder::last(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = last_.find(name);
  return it == last_.end() ? std::vector<Summary>{} : it->second.summaries;
}

}  // namespace powershape::analysis
