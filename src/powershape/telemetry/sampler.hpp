#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
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
  // ... and no more often than keeps those reads under this share of a core per GPU: an H200's
  // slow reads take ~5 ms of CPU together (measured: 4.6-5.6 ms), so 0.1% reads them every ~5 s.
  // Above 1: slow_period alone (a measurement that wants the counter every 100 ms).
  double slow_share = 0.001;
  // A signal the driver updates less often than the period is read at a quarter of its learnt
  // update period, at most every `stretch` periods (DCGM's per-field watch intervals): NVML's
  // power and clocks change every ~100 ms on an H200, so a 1 ms period reads them ~100 times a
  // value. The thread wakes when something is due, not every period. 1: every signal every period.
  int stretch = 4;
  // A driver call that has not returned after this long is given up on: its GPU is left out and
  // sampling goes on with the others (and with it again once the call returns).
  std::chrono::nanoseconds stall_after = std::chrono::milliseconds(500);
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
// A watchdog thread sees a call into the source that does not return (a hung driver): it records
// an event, leaves that GPU out, and starts a fresh sampling thread, so that the others are still
// sampled; the stuck thread, if its call ever returns, puts the GPU back and ends. A call that
// never returns keeps its thread, which the process's exit ends; the source must outlive it.
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
  // What a sampling thread that was given up on still touches when its call returns, kept alive
  // by that thread after the Sampler is gone: the mutex (which guards the Sampler's state too),
  // the generation, which GPUs are stuck, and the events.
  struct Shared {
    std::mutex mu;
    uint64_t generation = 0;    // the sampling thread's; older ones were given up on
    int64_t call_start_ns = 0;  // when its current call into the source began; 0: none
    int call_gpu = -1;
    std::vector<bool> stuck;  // per GPU: a call on it has not returned
    std::vector<Event> events;
  };
  enum class Call { kDone, kSkipped, kGivenUp };

  void run(const std::shared_ptr<Shared>& sh, uint64_t generation);
  // false when this thread was given up on during the round (its rows are dropped)
  bool round(const std::shared_ptr<Shared>& sh, uint64_t generation, bool drain, bool slow);
  // Signal i of GPU g is due at or after due_[g][i] (steady ns); read every read_ns_[g][i].
  void plan_reads(int64_t now);
  int64_t earliest_due() const;
  void push(std::vector<Sample>& rows);
  void watch();
  void launch();
  // The sampling thread's call into the source for GPU g: skipped while g is stuck; kGivenUp
  // when the watchdog gave up on it during the call (it then touches only *sh).
  template <class F>
  static Call call_source(Shared& sh, uint64_t generation, int g, F&& f);

  Source& source_;
  SamplerOptions options_;
  std::thread thread_, watchdog_;
  std::atomic<bool> stopping_{false};
  std::shared_ptr<Shared> sh_;  // its mutex guards everything below
  std::condition_variable wake_, done_;
  bool finished_ = false;    // the sampling thread has ended (or was given up on while stopping)
  bool watch_stop_ = false;  // the watchdog ends
  std::deque<Sample> buffer_;
  std::vector<Region> open_, closed_;
  std::vector<std::array<UpdateTracker, kSignalCount>> trackers_;
  std::vector<std::array<bool, kSignalCount>> failing_;  // reported a failure already
  std::vector<SignalSet> cheap_;            // per GPU: the signals read between slow rounds
  std::chrono::nanoseconds slow_period_{};  // options' slow_period, lengthened by slow_share
  // The sampling thread's own (not under the mutex): each cheap signal's read period and when
  // it is due next; the read periods are learnt from the trackers every second.
  std::vector<std::array<int64_t, kSignalCount>> read_ns_, due_;
  int64_t next_plan_ns_ = 0;  // when plan_reads runs next; 0: not started
  SamplerStats stats_;
};

}  // namespace powershape::telemetry
