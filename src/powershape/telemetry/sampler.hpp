#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "powershape/telemetry/region.hpp"
#include "powershape/telemetry/source.hpp"
#include "powershape/telemetry/update_tracker.hpp"

namespace powershape::telemetry {

struct SamplerOptions {
  std::chrono::nanoseconds period = std::chrono::milliseconds(10);
  std::size_t capacity = std::size_t{1} << 18;  // rows held until take(); more are dropped
  // How often buffered driver rows are harvested: the H200 driver keeps ~2.4 s of power samples
  // (120 at 20 ms), so 500 ms loses none and costs far less than a call every round.
  std::chrono::nanoseconds drain_period = std::chrono::milliseconds(500);
  // Signals whose read costs more than slow_cost (the source measures it) are read only every
  // slow_period: on an H200 the energy counter costs ~3 ms a read, three times a 1 ms period.
  std::chrono::nanoseconds slow_cost = std::chrono::microseconds(20);
  std::chrono::nanoseconds slow_period = std::chrono::milliseconds(1000);
};

struct SamplerStats {
  uint64_t polls = 0;    // sampling rounds over all GPUs
  uint64_t late = 0;     // rounds that started more than one period late
  uint64_t dropped = 0;  // rows lost to a full buffer
  int64_t cpu_ns = 0;    // CPU time the sampling thread used
  int64_t wall_ns = 0;   // how long it ran
  int64_t busy_ns = 0;   // wall time spent inside rounds (polling and bookkeeping)
};

// A thread that polls every device of a source at a fixed period, harvests buffered driver rows,
// and keeps them in a bounded buffer for a consumer to take. Regions are placed from any thread.
class Sampler {
 public:
  Sampler(Source& source, SamplerOptions options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  void start();
  // Stops the thread after one last round; idempotent.
  void stop();

  std::vector<Sample> take();
  std::vector<Event> take_events();
  // Regions that have ended, in the order they ended.
  std::vector<Region> take_regions();
  // t_ns: when it began or ended on the steady clock; default now.
  void begin_region(const std::string& name, int gpu = -1, std::optional<int64_t> t_ns = {});
  // Ends the innermost open region of that name; false when none is open.
  bool end_region(const std::string& name, std::optional<int64_t> t_ns = {});
  // Ends every open region now (or at t_ns) and returns them.
  std::vector<Region> close_open_regions(std::optional<int64_t> t_ns = {});

  SamplerStats stats() const;
  // The learned update period of a signal on a GPU (index into the source's devices()).
  std::optional<int64_t> update_period_ns(int gpu, Signal s) const;
  std::size_t update_count(int gpu, Signal s) const;

 private:
  void run();
  void round(bool drain, bool slow);
  void push(std::vector<Sample>& rows);

  Source& source_;
  SamplerOptions options_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::condition_variable wake_;
  mutable std::mutex mu_;  // guards everything below
  std::deque<Sample> buffer_;
  std::vector<Event> events_;
  std::vector<Region> open_, closed_;
  std::vector<std::array<UpdateTracker, kSignalCount>> trackers_;
  std::vector<std::array<bool, kSignalCount>> failing_;  // reported a failure already
  std::vector<SignalSet> cheap_;                         // per GPU: the signals read every round
  SamplerStats stats_;
};

}  // namespace powershape::telemetry
