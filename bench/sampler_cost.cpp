// Sampler cost and completeness, for one GPU or a node.
//   sampler_cost [--source nvml|fake:TRACE.csv] [--seconds S] [--interval MS] [--stretch K]
// Phase 1 (reference): a tight loop polls GPU 0 as fast as it can and counts the distinct updates
// of each signal. Phase 2: the Sampler at the chosen period samples every GPU of the source. Prints
// the sampler's CPU share of one core for the node and per GPU (targets: 2% for one GPU at 1 ms,
// 1% for a node at the default 10 ms), the update rate it saw on GPU 0 against the reference's
// (target 1.00), and whether each GPU's driver power buffer was harvested without gaps. A node
// without the GPUs: the fake NVML with POWERSHAPE_FAKE_NVML_GPUS=8 and
// POWERSHAPE_FAKE_NVML_FAULTS=h200_costs (each call burns what it costs on an H200).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "powershape/telemetry/clock.hpp"
#include "powershape/telemetry/sampler.hpp"
#include "powershape/trace/open_source.hpp"

using namespace powershape;
using telemetry::Signal;

namespace {

constexpr Signal kWatched[] = {Signal::kPowerUsage, Signal::kPowerInstant, Signal::kEnergy,
                               Signal::kSmClock, Signal::kReasons};

// Counts the distinct updates of the watched signals in a stream of polls.
class UpdateCounter {
 public:
  void feed(const telemetry::Sample& s) {
    if (first_ns_ < 0) first_ns_ = s.t_ns;
    last_ns_ = s.t_ns;
    for (Signal sig : kWatched) {
      if (!s[sig].ok()) continue;
      auto it = last_.find(sig);
      if (it != last_.end() && it->second != s[sig].value) ++n_[sig];
      last_[sig] = s[sig].value;
    }
  }
  double per_s(Signal sig) const {
    auto it = n_.find(sig);
    double secs = static_cast<double>(last_ns_ - first_ns_) * 1e-9;
    return it == n_.end() || secs <= 0 ? 0.0 : it->second / secs;
  }

 private:
  int64_t first_ns_ = -1, last_ns_ = 0;
  std::map<Signal, int64_t> last_;
  std::map<Signal, int> n_;
};

double thread_cpu_s() { return static_cast<double>(telemetry::thread_cpu_ns()) * 1e-9; }

double empty_loop_cpu_percent(std::chrono::nanoseconds period, double seconds) {
  double cpu = 0;
  std::thread t([&] {
    double c0 = thread_cpu_s();
    auto next = std::chrono::steady_clock::now();
    auto end = next + std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::duration<double>(seconds));
    while (next < end) {
      next += period;
      std::this_thread::sleep_until(next);
    }
    cpu = thread_cpu_s() - c0;
  });
  t.join();
  return 100.0 * cpu / seconds;
}

// The source as the sampler sees it, with the wall time inside each kind of call added up: what
// a round's driver calls cost against the rest of the round (bookkeeping, clock reads).
class TimedSource : public telemetry::Source {
 public:
  explicit TimedSource(telemetry::Source& inner) : inner_(inner) {}
  std::string describe() const override { return inner_.describe(); }
  const std::vector<telemetry::DeviceInfo>& devices() const override { return inner_.devices(); }
  telemetry::Sample poll(int gpu, const telemetry::SignalSet& which) override {
    const int64_t t = telemetry::steady_now_ns();
    telemetry::Sample s = inner_.poll(gpu, which);
    const int64_t took = telemetry::steady_now_ns() - t;
    const auto cost = inner_.read_cost_ns(gpu);
    bool any_slow = false;  // a poll with a signal the sampler reads only in slow rounds
    for (std::size_t i = 0; i < cost.size(); ++i) {
      any_slow |= which[i] && cost[i] > telemetry::SamplerOptions{}.slow_cost.count();
    }
    Spent& spent = any_slow ? slow : plain;
    spent.ns += took;
    ++spent.calls;
    return s;
  }
  std::array<int64_t, telemetry::kSignalCount> read_cost_ns(int gpu) const override {
    return inner_.read_cost_ns(gpu);
  }
  int64_t buffer_ns(int gpu) const override { return inner_.buffer_ns(gpu); }
  std::vector<telemetry::Sample> drain(int gpu) override {
    const int64_t t = telemetry::steady_now_ns();
    auto rows = inner_.drain(gpu);
    drains.ns += telemetry::steady_now_ns() - t;
    ++drains.calls;
    return rows;
  }
  std::vector<telemetry::Event> take_events() override { return inner_.take_events(); }
  std::vector<telemetry::Region> take_regions() override { return inner_.take_regions(); }

  struct Spent {
    int64_t ns = 0, calls = 0;
    double us_each() const { return calls > 0 ? static_cast<double>(ns) * 1e-3 / calls : 0.0; }
  };
  Spent plain, slow, drains;

 private:
  telemetry::Source& inner_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sampler cost and completeness"};
  std::string source = "nvml";
  double seconds = 5, interval_ms = 1;
  int stretch = telemetry::SamplerOptions{}.stretch;
  app.add_option("--source", source);
  app.add_option("--stretch", stretch,
                 "Read periods up to this many intervals (1: every signal every interval)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--seconds", seconds);
  app.add_option("--interval", interval_ms);
  CLI11_PARSE(app, argc, argv);
  try {
    auto src = trace::open_source(source, {});
    // Reference: poll back to back.
    UpdateCounter ref;
    int64_t end = telemetry::steady_now_ns() + static_cast<int64_t>(seconds * 1e9);
    int64_t polls = 0, poll_ns = 0;
    while (telemetry::steady_now_ns() < end) {
      int64_t t = telemetry::steady_now_ns();
      ref.feed(src->poll(0, telemetry::all_signals()));
      poll_ns += telemetry::steady_now_ns() - t;
      ++polls;
      src->drain(0);
    }

    telemetry::SamplerOptions o;
    o.period = std::chrono::nanoseconds(static_cast<int64_t>(interval_ms * 1e6));
    o.stretch = stretch;
    TimedSource timed(*src);
    telemetry::Sampler sampler(timed, o);
    sampler.start();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    sampler.stop();
    auto rows = sampler.take();
    std::map<int, std::vector<int64_t>> driver;  // per GPU: its driver rows' times
    UpdateCounter got;
    for (auto& s : rows) {
      if (s[Signal::kDriverPower].ok()) {
        driver[s.gpu].push_back(s.t_ns);
      } else if (s.gpu == 0) {
        got.feed(s);
      }
    }
    auto st = sampler.stats();
    double cpu_pct = 100.0 * static_cast<double>(st.cpu_ns) / static_cast<double>(st.wall_ns);
    // Reference: a loop that only sleeps to the same deadlines. Its CPU is what any sampler at
    // this period pays for its wake-ups on this machine.
    double floor_pct = empty_loop_cpu_percent(o.period, seconds / 2);

    std::printf("source %s, device '%s'\n", src->describe().c_str(),
                src->devices()[0].name.c_str());
    std::printf("one poll of every signal: %.1f us (mean of %lld back-to-back polls)\n",
                static_cast<double>(poll_ns) / static_cast<double>(polls) * 1e-3,
                static_cast<long long>(polls));
    const auto gpus = src->devices().size();
    const double target = gpus == 1 && interval_ms <= 1 ? 2.0 : 1.0;
    std::printf(
        "sampler at %.2f ms (stretch %d) over %zu GPU(s): %llu rounds in %.2f s, %llu late, CPU "
        "%.3f%% of one core, %.3f%% per GPU (target < %.0f%%: ratio %.2f)\n",
        interval_ms, stretch, gpus, static_cast<unsigned long long>(st.polls), st.wall_ns * 1e-9,
        static_cast<unsigned long long>(st.late), cpu_pct, cpu_pct / static_cast<double>(gpus),
        target, cpu_pct / target);
    std::printf("time inside rounds: %.3f%% of wall (%.1f us a round)\n",
                100.0 * static_cast<double>(st.busy_ns) / static_cast<double>(st.wall_ns),
                static_cast<double>(st.busy_ns) * 1e-3 / static_cast<double>(st.polls));
    std::printf(
        "  of which driver calls: plain polls %.1f us x %lld, polls with the slow signals %.0f us "
        "x "
        "%lld, "
        "drains %.0f us x %lld (%.3f%% of wall in all)\n",
        timed.plain.us_each(), static_cast<long long>(timed.plain.calls), timed.slow.us_each(),
        static_cast<long long>(timed.slow.calls), timed.drains.us_each(),
        static_cast<long long>(timed.drains.calls),
        100.0 * static_cast<double>(timed.plain.ns + timed.slow.ns + timed.drains.ns) /
            static_cast<double>(st.wall_ns));
    std::printf(
        "reference: an empty loop sleeping to the same deadlines uses %.3f%%; the "
        "sampler's own work: %.3f%% (ratio sampler/empty loop %.2f)\n",
        floor_pct, cpu_pct - floor_pct, floor_pct > 0 ? cpu_pct / floor_pct : 0.0);
    std::printf("%-16s %14s %14s %8s\n", "signal", "tight updates/s", "sampler upd/s", "ratio");
    for (Signal sig : kWatched) {
      double a = ref.per_s(sig), b = got.per_s(sig);
      std::printf("%-16s %14.2f %14.2f %8.3f\n", std::string(telemetry::spec(sig).name).c_str(), a,
                  b, a > 0 ? b / a : 0.0);
    }
    for (std::size_t g = 0; g < gpus; ++g) {
      const std::vector<int64_t>& t = driver[static_cast<int>(g)];
      if (t.size() < 3) {
        std::printf("GPU %zu driver power buffer: %zu samples (not supported by this source?)\n", g,
                    t.size());
        continue;
      }
      std::vector<int64_t> gaps;
      for (std::size_t i = 1; i < t.size(); ++i) gaps.push_back(t[i] - t[i - 1]);
      auto sorted = gaps;
      std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
      const int64_t med = sorted[sorted.size() / 2];
      const auto missing =
          std::count_if(gaps.begin(), gaps.end(), [&](int64_t d) { return d > med * 3 / 2; });
      std::printf(
          "GPU %zu driver power buffer: %zu samples harvested, median spacing %.2f ms, %ld gaps "
          "over 1.5x the median\n",
          g, t.size(), static_cast<double>(med) * 1e-6, static_cast<long>(missing));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sampler_cost: %s\n", e.what());
    return 1;
  }
  return 0;
}
