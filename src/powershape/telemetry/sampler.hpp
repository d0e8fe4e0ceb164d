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
#include "powershape/telemetry/region_stack.hpp"
#include "powershape/telemetry/source.hpp"
#include "powershape/telemetry/update_tracker.hpp"

namespace powershape::telemetry {

struct SamplerOptions {
  std::chrono::nanoseconds period = std::chrono::milliseconds(10);
  std::size_t capacity = std::size_t{1} << 18;  // rows held until take(); more are dropped
  // How often buffered driver rows are harvested. 0: as rarely as the source's buffer allows (a
  // drain costs ~0.7 ms of CPU on an H200 whatever it returns): before it wraps even when a round
  // is late by a stalled call (stall_after and the watchdog's look), a grid step and a read, at
  // most at three quarters of its depth and at least at half (an H200's driver keeps 2.4 s of
  // power samples: every ~1.7 s), at most every max_drain_period so that live views stay fresh,
  // and every 500 ms where the source cannot say how far back it reaches.
  std::chrono::nanoseconds drain_period{0};
  std::chrono::nanoseconds max_drain_period = std::chrono::seconds(2);
  // Signals whose read costs more than slow_cost (the source measures it) are read only every
  // slow_period: on an H200 the energy counter costs ~3 ms a read, three times a 1 ms period.
  std::chrono::nanoseconds slow_cost = std::chrono::microseconds(20);
  std::chrono::nanoseconds slow_period = std::chrono::milliseconds(1000);
  // ... and at least every max_slow_period, however many GPUs share the slow_share below.
  std::chrono::nanoseconds max_slow_period = std::chrono::seconds(30);
  // ... and no more often than keeps those reads, of all GPUs together, under this share of a
  // core: an H200's slow reads take ~5 ms of CPU (measured: 4.3-5.6 ms), so 0.1% reads one H200's
  // every ~5 s and each of a node of eight every 30 s (max_slow_period; 0.12% of a core; energy
  // between reads comes from the driver's 20 ms power samples). Each GPU's slow reads fall in
  // rounds of their own.
  // Above 1: slow_period alone (a measurement that wants the counter every 100 ms).
  double slow_share = 0.001;
  // A signal the driver updates less often than the period is read about twice an update (every
  // period times the largest power of two up to 0.55 of its learnt update period), at most every
  // `stretch` periods (rounded down to a power of two; DCGM's per-field watch intervals): NVML's
  // power and clocks change every ~100 ms on an H200, so a 1 ms period would read them ~100 times
  // a value. The thread wakes when something is due, not every period, and reads of every GPU
  // fall on one grid, so that they share rounds. 1: every signal every period.
  int stretch = 4;
  // A driver call that has not returned after this long is given up on: its GPU is left out and
  // sampling goes on with the others (and with it again once the call returns).
  std::chrono::nanoseconds stall_after = std::chrono::milliseconds(500);
  // Ask each GPU once a second for its processes' samples (take_processes; at most `capacity`
  // held): for a recorder that splits energy by process (monitor), off for the others.
  bool processes = false;
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
  // The processes' utilization samples, each GPU's asked for once a second.
  std::vector<ProcessSample> take_processes();
  // Regions that have ended, in the order they ended.
  std::vector<Region> take_regions();
  // t_ns: when it began or ended on the steady clock; default now. Returns the oldest open region
  // when it was dropped to make room (RegionStack::kMaxOpen are open).
  std::optional<Region> begin_region(const std::string& name, int gpu = -1,
                                     std::optional<int64_t> t_ns = {});
  // Ends the innermost open region of that name (at its begin, if t_ns is earlier) and returns
  // it; none when none is open.
  std::optional<Region> end_region(const std::string& name, std::optional<int64_t> t_ns = {});
  // Whether a region of that name has begun and not yet ended.
  bool is_open(const std::string& name) const;
  // Ends every open region now (or at t_ns) and returns them.
  std::vector<Region> close_open_regions(std::optional<int64_t> t_ns = {});
  // Forgets every open region, none of them ended, and returns them.
  std::vector<Region> drop_open_regions();

  SamplerStats stats() const;
  // The learned update period of a signal on a GPU (index into the source's devices()).
  std::optional<int64_t> update_period_ns(int gpu, Signal s) const;
  // How often the signal is read now: a change is seen at the next read, so a learned update
  // period is known to about this much.
  int64_t read_period_ns(int gpu, Signal s) const;
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
    std::vector<ProcessSample> processes;
  };
  enum class Call { kDone, kSkipped, kGivenUp };

  void run(const std::shared_ptr<Shared>& sh, uint64_t generation);
  // Polls what is due (everything when `all`: the first and the last round) and drains the GPUs
  // whose buffers are due; false when this thread was given up on during the round (its rows are
  // dropped).
  bool round(const std::shared_ptr<Shared>& sh, uint64_t generation, bool all);
  // Signal i of GPU g is due at or after due_[g][i] (steady ns); read every read_ns_[g][i].
  void plan_reads(int64_t now);
  int64_t drain_every(int64_t depth_ns) const;
  // How often the watchdog looks for a stalled call.
  std::chrono::nanoseconds watchdog_tick() const {
    return std::min<std::chrono::nanoseconds>(options_.stall_after / 4,
                                              std::chrono::milliseconds(100));
  }
  int64_t earliest_due() const;
  // The first time at or after t on a grid of `step` from the sampling thread's start: reads of
  // one period, on every GPU, fall in the same rounds (fewer wake-ups), and longer read periods,
  // powers of two of the period, fall in the rounds of shorter ones.
  int64_t on_grid(int64_t t, int64_t step) const;
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
  RegionStack<> open_;
  std::vector<Region> closed_;
  std::vector<std::array<UpdateTracker, kSignalCount>> trackers_;
  std::vector<std::array<bool, kSignalCount>> failing_;  // reported a failure already
  std::vector<SignalSet> cheap_;   // per GPU: the signals read between slow rounds
  int64_t slow_ns_ = 0;            // options' slow_period, lengthened by slow_share
  std::vector<int64_t> drain_ns_;  // per GPU: how often its buffer is drained
  // The sampling thread's own (not under the mutex): each cheap signal's read period and when
  // it is due next (the read periods are learnt from the trackers every second), and when each
  // GPU's slow signals and buffer are due (GPUs spread over the period, not in one round).
  std::vector<std::array<int64_t, kSignalCount>> read_ns_, due_;
  std::vector<int64_t> slow_due_, drain_due_, processes_due_;
  int64_t longest_read_ns_ = 0;  // the period times the largest power of two up to stretch
  int64_t epoch_ns_ = 0;         // the start of the grid: when the sampling thread started
  int64_t next_plan_ns_ = 0;     // when plan_reads runs next; 0: not started
  SamplerStats stats_;
};

}  // namespace powershape::telemetry
