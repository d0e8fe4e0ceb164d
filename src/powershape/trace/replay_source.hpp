#pragma once
#include <string>
#include <vector>

#include "powershape/trace/trace.hpp"

namespace powershape::trace {

// Plays a recorded trace back in real time (times `speed`) as a telemetry source: a poll returns,
// for each signal, the last reading recorded at or before the replay time; after the trace ends
// the last readings hold. Driver-buffer rows come out of drain() as their time passes, and the
// trace's regions (a `cond` column's conditions, a recording's marks) out of take_regions() once
// their end has passed.
class ReplaySource final : public telemetry::Source {
 public:
  // Throws std::runtime_error when the trace has no samples or speed is not positive.
  ReplaySource(Trace trace, std::string name, double speed = 1.0);
  std::string describe() const override { return "fake:" + name_; }
  const std::vector<DeviceInfo>& devices() const override { return devices_; }
  Sample poll(int gpu, const telemetry::SignalSet& which) override;
  std::vector<Sample> drain(int gpu) override;
  std::vector<telemetry::Region> take_regions() override;

 private:
  struct Track {
    std::vector<Sample> polls;   // rows with any polled signal
    std::vector<Sample> driver;  // driver-buffer rows
    std::size_t next_poll = 0, next_driver = 0;
    Sample current;
  };
  int64_t replay_time_ns() const;
  int64_t steady_of(int64_t trace_ns) const;

  std::string name_;
  double speed_;
  int64_t t0_trace_ns_ = 0;
  int64_t t0_steady_ns_ = 0;
  std::vector<DeviceInfo> devices_;
  std::vector<Track> tracks_;
  std::vector<telemetry::Region> regions_;  // by end time
  std::size_t next_region_ = 0;
};

}  // namespace powershape::trace
