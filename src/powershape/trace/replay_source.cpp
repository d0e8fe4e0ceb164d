#include "powershape/trace/replay_source.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"

namespace powershape::trace {
using telemetry::Signal;
using telemetry::Status;

ReplaySource::ReplaySource(Trace trace, std::string name, double speed)
    : name_(std::move(name)), speed_(speed) {
  if (trace.samples.empty()) throw invalid_input(name_ + ": the trace holds no samples");
  if (!(speed > 0)) throw invalid_input("replay speed must be positive");
  int max_gpu = 0;
  for (const auto& s : trace.samples) max_gpu = std::max(max_gpu, s.gpu);
  tracks_.resize(static_cast<std::size_t>(max_gpu) + 1);
  t0_trace_ns_ = trace.samples.front().t_ns;
  for (auto& s : trace.samples) {
    t0_trace_ns_ = std::min(t0_trace_ns_, s.t_ns);
    Track& tr = tracks_[static_cast<std::size_t>(s.gpu)];
    bool driver_only = true;
    for (std::size_t i = 0; i < telemetry::kSignalCount; ++i) {
      if (i != static_cast<std::size_t>(Signal::kDriverPower) &&
          s.readings[i].status != Status::kNotRead) {
        driver_only = false;
      }
    }
    (driver_only ? tr.driver : tr.polls).push_back(std::move(s));
  }
  for (std::size_t g = 0; g < tracks_.size(); ++g) {
    Track& tr = tracks_[g];
    auto by_time = [](const Sample& a, const Sample& b) { return a.t_ns < b.t_ns; };
    std::stable_sort(tr.polls.begin(), tr.polls.end(), by_time);
    std::stable_sort(tr.driver.begin(), tr.driver.end(), by_time);
    DeviceInfo info;
    auto it = std::find_if(trace.devices.begin(), trace.devices.end(),
                           [&](const DeviceInfo& d) { return d.index == static_cast<int>(g); });
    if (it != trace.devices.end()) {
      info = *it;
    } else {
      info.index = static_cast<int>(g);
      info.name = "replay of " + name_;
      for (std::size_t i = 0; i < telemetry::kSignalCount; ++i) {
        bool seen = std::any_of(tr.polls.begin(), tr.polls.end(),
                                [&](const Sample& s) { return s.readings[i].ok(); }) ||
                    std::any_of(tr.driver.begin(), tr.driver.end(),
                                [&](const Sample& s) { return s.readings[i].ok(); });
        info.support[i] = seen ? Status::kOk : Status::kNotSupported;
      }
    }
    devices_.push_back(info);
  }
  regions_ = std::move(trace.regions);
  std::stable_sort(regions_.begin(), regions_.end(),
                   [](const auto& a, const auto& b) { return a.end_ns < b.end_ns; });
  t0_steady_ns_ = telemetry::steady_now_ns();
}

int64_t ReplaySource::steady_of(int64_t trace_ns) const {
  // In double and saturated, as replay_time_ns: a trace may span most of int64.
  const double t = static_cast<double>(t0_steady_ns_) +
                   (static_cast<double>(trace_ns) - static_cast<double>(t0_trace_ns_)) / speed_;
  return t >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(t);
}

int64_t ReplaySource::replay_time_ns() const {
  // In double and saturated: a fast replay runs past the end of any trace, never past int64.
  const double t = static_cast<double>(t0_trace_ns_) +
                   static_cast<double>(telemetry::steady_now_ns() - t0_steady_ns_) * speed_;
  return t >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(t);
}

Sample ReplaySource::poll(int gpu,
                          const telemetry::SignalSet& /*which: replayed rows cost nothing*/) {
  Track& tr = tracks_.at(static_cast<std::size_t>(gpu));
  int64_t now = replay_time_ns();
  while (tr.next_poll < tr.polls.size() && tr.polls[tr.next_poll].t_ns <= now) {
    const Sample& row = tr.polls[tr.next_poll++];
    for (std::size_t i = 0; i < telemetry::kSignalCount; ++i) {
      if (row.readings[i].status != Status::kNotRead) tr.current.readings[i] = row.readings[i];
    }
  }
  const DeviceInfo& info = devices_[static_cast<std::size_t>(gpu)];
  Sample s = tr.current;
  for (std::size_t i = 0; i < telemetry::kSignalCount; ++i) {
    if (info.support[i] == Status::kNotSupported)
      s.readings[i] = telemetry::Reading::failed(Status::kNotSupported);
  }
  s[Signal::kDriverPower] = {};
  s.gpu = gpu;
  s.t_ns = telemetry::steady_now_ns();
  return s;
}

std::vector<Sample> ReplaySource::drain(int gpu) {
  Track& tr = tracks_.at(static_cast<std::size_t>(gpu));
  int64_t now = replay_time_ns();
  std::vector<Sample> out;
  while (tr.next_driver < tr.driver.size() && tr.driver[tr.next_driver].t_ns <= now) {
    Sample s = tr.driver[tr.next_driver++];
    s.gpu = gpu;
    s.t_ns = steady_of(s.t_ns);
    out.push_back(s);
  }
  return out;
}

std::vector<telemetry::Region> ReplaySource::take_regions() {
  const int64_t now = replay_time_ns();
  std::vector<telemetry::Region> out;
  for (; next_region_ < regions_.size() && regions_[next_region_].end_ns <= now; ++next_region_) {
    telemetry::Region r = regions_[next_region_];
    r.begin_ns = steady_of(std::max(r.begin_ns, t0_trace_ns_));
    r.end_ns = steady_of(r.end_ns);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace powershape::trace
