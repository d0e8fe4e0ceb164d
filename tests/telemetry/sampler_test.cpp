#include "powershape/telemetry/sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"

namespace powershape::telemetry {
namespace {

// A source whose power rises by 1 mW per poll and whose clock fails on every poll after 5.
class CountingSource : public Source {
 public:
  CountingSource() { infos_.resize(2); }
  std::string describe() const override { return "counting"; }
  const std::vector<DeviceInfo>& devices() const override { return infos_; }
  Sample poll(int gpu, const SignalSet& which) override {
    selected_ = which;
    Sample s;
    s.gpu = gpu;
    s.t_ns = steady_now_ns();
    s[Signal::kPowerUsage] = Reading::of(++polls_[gpu]);
    s[Signal::kSmClock] = polls_[gpu] > 5 ? Reading::failed(Status::kError) : Reading::of(1980);
    if (selected_[static_cast<std::size_t>(Signal::kEnergy)])
      s[Signal::kEnergy] = Reading::of(polls_[gpu]);
    return s;
  }
  std::array<int64_t, kSignalCount> read_cost_ns(int) const override {
    std::array<int64_t, kSignalCount> c{};
    c[static_cast<std::size_t>(Signal::kEnergy)] = 3'000'000;  // as on an H200: 3 ms a read
    return c;
  }
  SignalSet selected_ = SignalSet().set();
  std::vector<Sample> drain(int gpu) override {
    Sample d;
    d.gpu = gpu;
    d.t_ns = steady_now_ns();
    d[Signal::kDriverPower] = Reading::of(7);
    return {d};
  }
  int polls_[2] = {0, 0};

 private:
  std::vector<DeviceInfo> infos_;
};

// Two GPUs; a poll of GPU 1 from poll number `hang_at` on blocks until release() (a hung driver).
class HangingSource : public CountingSource {
 public:
  explicit HangingSource(int hang_at) : hang_at_(hang_at) {}
  Sample poll(int gpu, const SignalSet& which) override {
    if (gpu == 1 && ++gpu1_polls_ == hang_at_) {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return released_; });
    }
    std::lock_guard lock(count_mu_);
    return CountingSource::poll(gpu, which);
  }
  void release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  int hang_at_;
  std::atomic<int> gpu1_polls_{0};
  std::mutex mu_, count_mu_;
  std::condition_variable cv_;
  bool released_ = false;
};

}  // namespace

namespace {
// Sampling every 2 ms, giving a call up after `stall_ms`.
SamplerOptions quick(int stall_ms) {
  SamplerOptions o;
  o.period = std::chrono::milliseconds(2);
  o.stall_after = std::chrono::milliseconds(stall_ms);
  return o;
}
}  // namespace

// A call that does not return stalls nothing: the other GPU is sampled on, the stuck one is left
// out with an event, and taken back (with another) once its call returns.
TEST(Sampler, AHungDriverCallLeavesItsGpuOutAndTheOthersAreSampledOn) {
  HangingSource src(3);
  Sampler s(src, quick(100));
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto during = s.take();
  auto events = s.take_events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].gpu, 1);
  EXPECT_NE(events[0].what.find("has not returned"), std::string::npos) << events[0].what;
  int64_t last0 = 0, last1 = 0;
  for (const auto& r : during)
    (r.gpu == 0 ? last0 : last1) = std::max(r.gpu == 0 ? last0 : last1, r.t_ns);
  EXPECT_GT(last0 - last1, 250'000'000) << "GPU 0 went on being sampled while GPU 1 hung";
  src.release();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  s.stop();
  auto after = s.take();
  EXPECT_TRUE(std::any_of(after.begin(), after.end(), [](const Sample& r) { return r.gpu == 1; }))
      << "GPU 1 is sampled again once its call returned";
  auto back = s.take_events();
  EXPECT_TRUE(std::any_of(back.begin(), back.end(), [](const Event& e) {
    return e.gpu == 1 && e.what.find("sampled again") != std::string::npos;
  }));
}

// A call that hangs during stop() does not hang stop().
TEST(Sampler, StopReturnsWhileACallHangs) {
  HangingSource src(1);
  {
    Sampler s(src, quick(50));
    s.start();
    const auto t0 = std::chrono::steady_clock::now();
    s.stop();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  }
  src.release();  // the abandoned thread returns and ends
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// stretch = 1: every signal every period (ReadsEachSignalAtAQuarterOfItsUpdatePeriod for the rest).
TEST(Sampler, PollsEveryDeviceAtThePeriodAndHarvestsDriverRows) {
  CountingSource src;
  SamplerOptions o{std::chrono::milliseconds(2), 1 << 16, std::chrono::milliseconds(20)};
  o.stretch = 1;
  Sampler s(src, o);
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  s.stop();
  auto rows = s.take();
  auto st = s.stats();
  EXPECT_GT(st.polls, 50u);  // 100 expected at 2 ms; leave room for a loaded CI machine
  EXPECT_LT(st.polls, 110u);
  std::size_t driver_rows = 0;
  for (const auto& r : rows) driver_rows += r[Signal::kDriverPower].ok();
  EXPECT_EQ(rows.size() - driver_rows, st.polls * 2);  // every round polls both GPUs
  EXPECT_GE(driver_rows, 2u * 6);  // harvested every 20 ms (+ once at the end), not every round
  EXPECT_LE(driver_rows, 2u * 12);
  EXPECT_EQ(st.dropped, 0u);
  EXPECT_GT(st.cpu_ns, 0);
  EXPECT_GT(st.busy_ns, 0);
  EXPECT_LT(st.busy_ns, st.wall_ns);
  ASSERT_TRUE(s.update_period_ns(0, Signal::kPowerUsage));
}

TEST(Sampler, RecordsTheFirstFailureOfASignalOnceAndSurvives) {
  CountingSource src;
  Sampler s(src, {std::chrono::milliseconds(1), 1 << 16});
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  s.stop();
  auto events = s.take_events();
  ASSERT_EQ(events.size(), 2u);  // one per GPU
  EXPECT_EQ(events[0].what, "sm_clock: [Error]");
}

TEST(Sampler, ABoundedBufferDropsAndCounts) {
  CountingSource src;
  Sampler s(src, {std::chrono::milliseconds(1), 10});
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  s.stop();
  EXPECT_EQ(s.take().size(), 10u);
  EXPECT_GT(s.stats().dropped, 0u);
}

TEST(Sampler, ReadsExpensiveSignalsOnlyEverySlowPeriod) {
  CountingSource src;
  SamplerOptions o;
  o.period = std::chrono::milliseconds(1);
  o.slow_period = std::chrono::milliseconds(25);
  o.slow_share = 2;  // slow_period alone
  Sampler s(src, o);
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  s.stop();
  std::size_t polls = 0, energy = 0;
  for (const auto& r : s.take()) {
    if (r.gpu != 0 || r[Signal::kDriverPower].ok()) continue;
    ++polls;
    energy += r[Signal::kEnergy].ok();
  }
  EXPECT_GT(polls, 40u);
  EXPECT_GE(energy, 3u);  // at 0, 25, 50, 75 ms and at the stop
  EXPECT_LE(energy, 6u);
}

namespace {
// One GPU whose power the driver updates every 8 ms and whose SM clock never changes; counts the
// reads of each.
class SteppedSource : public Source {
 public:
  SteppedSource() { infos_.resize(1); }
  std::string describe() const override { return "stepped"; }
  const std::vector<DeviceInfo>& devices() const override { return infos_; }
  Sample poll(int gpu, const SignalSet& which) override {
    Sample s;
    s.gpu = gpu;
    s.t_ns = steady_now_ns();
    if (which[static_cast<std::size_t>(Signal::kPowerUsage)]) {
      s[Signal::kPowerUsage] = Reading::of(s.t_ns / 8'000'000);
      ++power_reads;
    }
    if (which[static_cast<std::size_t>(Signal::kSmClock)]) {
      s[Signal::kSmClock] = Reading::of(1980);
      ++clock_reads;
    }
    return s;
  }
  int power_reads = 0, clock_reads = 0;

 private:
  std::vector<DeviceInfo> infos_;
};

struct SteppedRun {
  SamplerStats stats;
  int power_reads, clock_reads;
  std::size_t power_values;              // distinct power values recorded
  bool last_reads_all;                   // the last round (at the stop) read both signals
  int64_t power_read_ns, clock_read_ns;  // how often each was read at the end
};

SteppedRun sample_stepped(int stretch) {
  SteppedSource src;
  SamplerOptions o;
  o.period = std::chrono::milliseconds(1);
  o.stretch = stretch;
  Sampler s(src, o);
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  s.stop();
  std::vector<int64_t> values;
  const auto rows = s.take();
  for (const auto& r : rows) {
    if (r[Signal::kPowerUsage].ok()) values.push_back(r[Signal::kPowerUsage].value);
  }
  values.erase(std::unique(values.begin(), values.end()), values.end());
  const bool last_reads_all =
      !rows.empty() && rows.back()[Signal::kPowerUsage].ok() && rows.back()[Signal::kSmClock].ok();
  return {s.stats(),
          src.power_reads,
          src.clock_reads,
          values.size(),
          last_reads_all,
          s.read_period_ns(0, Signal::kPowerUsage),
          s.read_period_ns(0, Signal::kSmClock)};
}
}  // namespace

// A signal the driver updates every 8 ms is read every 4 ms (half of that), a constant one every
// 8 periods (stretch), once learnt (200 ms in), and the thread sleeps until one is due; no update
// is missed. Reads fall on a grid, so the clock's fall in rounds that read power. stretch = 1
// reads everything every period.
TEST(Sampler, ReadsEachSignalAtHalfItsUpdatePeriodInSharedRounds) {
  const SteppedRun every = sample_stepped(1), stretched = sample_stepped(8);
  EXPECT_GT(every.power_reads, 800);  // ~1000
  EXPECT_GT(every.clock_reads, 800);
  // The read periods are learnt 200 ms in (every period until then): ~200 + 200 reads of power,
  // ~200 + 100 of the clock, a round for each read of power.
  EXPECT_LT(stretched.power_reads, every.power_reads * 5 / 10);
  EXPECT_LT(stretched.clock_reads, every.clock_reads * 4 / 10);
  EXPECT_LE(stretched.stats.polls, static_cast<uint64_t>(stretched.power_reads) + 2);
  // ~125 updates in a second, each seen whichever way it was read.
  EXPECT_GE(stretched.power_values + 2, every.power_values);
  EXPECT_GT(stretched.power_values, 100u);
  EXPECT_TRUE(stretched.last_reads_all);  // the trace ends at the stop with every signal
  // and says how often it read each
  EXPECT_EQ(every.power_read_ns, 1'000'000);
  EXPECT_EQ(stretched.power_read_ns, 4'000'000);
  EXPECT_EQ(stretched.clock_read_ns, 8'000'000);
}

// The node's slow reads (3 ms of CPU a GPU here, two GPUs) no more often than keeps them under
// slow_share of a core: at 1% each GPU's every 600 ms, though slow_period asks for 25 ms; GPU 0's
// fall 300 ms after GPU 1's, not in the same round.
TEST(Sampler, KeepsTheNodesSlowReadsUnderTheirShareOfACoreAndSpreadsThem) {
  CountingSource src;
  SamplerOptions o;
  o.period = std::chrono::milliseconds(1);
  o.slow_period = std::chrono::milliseconds(25);
  o.slow_share = 0.01;
  Sampler s(src, o);
  const int64_t t0 = steady_now_ns();
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  s.stop();
  std::vector<int64_t> at[2];  // ms from the start of each GPU's energy reads
  for (const auto& r : s.take()) {
    if (r[Signal::kEnergy].ok()) at[r.gpu].push_back((r.t_ns - t0) / 1'000'000);
  }
  // GPU 0 at 0, 300, 900 and the stop; GPU 1 at 0, 600 and the stop (a slow stop may add one).
  ASSERT_GE(at[0].size(), 4u);
  ASSERT_GE(at[1].size(), 3u);
  EXPECT_LE(at[0].size() + at[1].size(), 8u);
  EXPECT_NEAR(static_cast<double>(at[0][1]), 300, 100);
  EXPECT_NEAR(static_cast<double>(at[0][2]), 900, 100);
  EXPECT_NEAR(static_cast<double>(at[1][1]), 600, 100);
}

namespace {
// Two counting GPUs whose buffers reach `depth_ns` back.
class BufferedSource : public CountingSource {
 public:
  explicit BufferedSource(int64_t depth_ns) : depth_ns_(depth_ns) {}
  int64_t buffer_ns(int) const override { return depth_ns_; }

 private:
  int64_t depth_ns_;
};

// The median time between GPU 0's drains (ms), the first (at the start) and the last (at the
// stop) left out, over `ms` of sampling.
double drain_spacing_ms(int64_t depth_ns, SamplerOptions o, int ms) {
  BufferedSource src(depth_ns);
  o.period = std::chrono::milliseconds(1);
  Sampler s(src, o);
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  s.stop();
  std::vector<int64_t> at;
  for (const auto& r : s.take()) {
    if (r.gpu == 0 && r[Signal::kDriverPower].ok()) at.push_back(r.t_ns);
  }
  std::vector<double> gaps;
  for (std::size_t i = 2; i + 1 < at.size(); ++i) gaps.push_back((at[i] - at[i - 1]) * 1e-6);
  if (gaps.empty()) return 0;
  std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
  return gaps[gaps.size() / 2];
}
}  // namespace

// A buffer is drained as rarely as it allows: before it wraps though a round be late by a stalled
// call (stall_after, the watchdog's look: 100 + 25 ms), a grid step, a read (4 ms each) and a
// period, between half and three quarters of its depth; at most every max_drain_period, every
// 500 ms when the source cannot say, and at drain_period when one is asked for.
TEST(Sampler, DrainsBuffersAsRarelyAsTheirDepthAllows) {
  SamplerOptions o;
  o.stall_after = std::chrono::milliseconds(100);
  EXPECT_NEAR(drain_spacing_ms(600'000'000, o, 1500), 450, 30);  // 3/4 of 600 (600 - 134 more)
  EXPECT_NEAR(drain_spacing_ms(400'000'000, o, 1200), 266, 30);  // 400 - 134
  EXPECT_NEAR(drain_spacing_ms(80'000'000, o, 400), 40, 10);     // half of 80
  EXPECT_NEAR(drain_spacing_ms(0, o, 1300), 500, 30);            // unknown
  SamplerOptions capped = o;
  capped.max_drain_period = std::chrono::milliseconds(50);
  EXPECT_NEAR(drain_spacing_ms(100'000'000'000, capped, 400), 50, 10);
  SamplerOptions asked = o;
  asked.drain_period = std::chrono::milliseconds(100);
  EXPECT_NEAR(drain_spacing_ms(80'000'000, asked, 600), 100, 10);
}

// A sampling period of zero cannot be kept: refused, not a thread that spins.
TEST(Sampler, AZeroPeriodIsRefused) {
  CountingSource src;
  SamplerOptions o;
  o.period = std::chrono::nanoseconds(0);
  EXPECT_THROW(Sampler(src, o), Error);
}

TEST(Sampler, RegionsNestAndEndByName) {
  CountingSource src;
  Sampler s(src, {});
  s.begin_region("outer", -1, 100);
  s.begin_region("inner", 1, 150);
  EXPECT_FALSE(s.end_region("nope"));
  EXPECT_TRUE(s.end_region("inner", 200));
  EXPECT_TRUE(s.end_region("outer", 300));
  auto r = s.take_regions();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], (Region{"inner", 1, 150, 200}));
  EXPECT_EQ(r[1], (Region{"outer", -1, 100, 300}));
}

}  // namespace powershape::telemetry

namespace powershape::telemetry {

TEST(RegionName, OneLineOfUtf8TextUpTo200Bytes) {
  EXPECT_EQ(region_name_problem("forward pass 3"), "");
  EXPECT_EQ(region_name_problem("vorwärts \xe2\x86\x92 ok \xf0\x9f\x94\xa5"), "");
  EXPECT_EQ(region_name_problem(""), "a region needs a name");
  EXPECT_EQ(region_name_problem(std::string(201, 'x')),
            "a region name is at most 200 bytes, found 201");
  EXPECT_EQ(region_name_problem("a\nb"),
            "a region name has no control characters (newlines, tabs, ...)");
  for (const char* bad :
       {"a\xff", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x86"}) {
    EXPECT_EQ(region_name_problem(bad), "a region name is UTF-8 text") << bad;
  }
}

TEST(Sampler, ClosesTheRegionsLeftOpen) {
  CountingSource src;
  Sampler s(src, {});
  s.begin_region("a", -1, 100);
  s.begin_region("b", -1, 200);
  auto closed = s.close_open_regions(300);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[1].end_ns, 300);
  EXPECT_EQ(s.take_regions().size(), 2u);
  EXPECT_FALSE(s.end_region("a"));
}

}  // namespace powershape::telemetry
