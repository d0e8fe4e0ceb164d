#include "powershape/shape/smooth.hpp"

#include <cmath>
#include <deque>
#include <utility>
#include <limits>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"

namespace powershape::shape {
namespace {

constexpr double kNoReading = std::numeric_limits<double>::quiet_NaN();

// Feeds the controller the readings the last turn brought, and the marks' state, and sets the
// filler to what it says.
class Feed {
 public:
  Feed(monitor::Session& s, Filler& f, FloorController& c, const SmoothOptions& o)
      : s_(s), f_(f), c_(c), o_(o) {}

  void turn() {
    s_.turn(o_.turn_ms);
    const auto& samples = s_.trace().samples;
    for (; seen_ < samples.size(); ++seen_) {
      const auto& r = samples[seen_];
      const double w = r.gpu == o_.gpu ? power_of(r) : kNoReading;
      if (std::isnan(w)) continue;
      c_.observe(r.t_ns, w);
      last_w_ = w;
      recent_.push_back({r.t_ns, w});
    }
    const bool gap = !o_.gap_region.empty() && s_.region_open(o_.gap_region);
    const double x = c_.decide(telemetry::steady_now_ns(), gap);
    f_.set_intensity(x);
    const int64_t keep_from = telemetry::steady_now_ns() - 1'000'000'000;
    while (!recent_.empty() && recent_.front().first < keep_from) recent_.pop_front();
  }
  // The mean of the last second's readings (the last reading where there is none).
  double recent_w() const {
    if (recent_.empty()) return last_w_;
    double sum = 0;
    for (const auto& [t, w] : recent_) sum += w;
    return sum / static_cast<double>(recent_.size());
  }
  bool any() const { return !std::isnan(last_w_); }

 private:
  monitor::Session& s_;
  Filler& f_;
  FloorController& c_;
  const SmoothOptions& o_;
  std::size_t seen_ = 0;
  double last_w_ = kNoReading;
  std::deque<std::pair<int64_t, double>> recent_;
};

double seconds_since(int64_t t0) {
  return static_cast<double>(telemetry::steady_now_ns() - t0) * 1e-9;
}

}  // namespace

double power_of(const telemetry::Sample& s) {
  for (const auto sig : {telemetry::Signal::kDriverPower, telemetry::Signal::kPowerInstant,
                         telemetry::Signal::kPowerUsage}) {
    if (s[sig].ok()) return static_cast<double>(s[sig].value) * 1e-3;
  }
  return kNoReading;
}

SmoothResult run_smoothed(monitor::Session& s, Filler& filler, FloorController& c,
                          const SmoothOptions& o) {
  if (!(o.turn_ms >= 1 && o.turn_ms <= 1000)) throw invalid_input("turn: expected 1-1000 ms");
  if (o.gpu < 0 || o.gpu >= static_cast<int>(s.source().devices().size()))
    throw invalid_input("gpu: the source has no device " + std::to_string(o.gpu));
  struct Stop {  // the filler stops however this ends
    Filler& f;
    ~Stop() { f.set_intensity(0); }
  } stop{filler};
  SmoothResult r;
  Feed feed(s, filler, c, o);
  s.start_sampler();
  // The power found: the first reading, waited for at most a second.
  const int64_t t0 = telemetry::steady_now_ns();
  while (!feed.any() && seconds_since(t0) < 1 && !s.signalled()) feed.turn();
  c.ramp_up(telemetry::steady_now_ns(), feed.recent_w());
  while (c.phase(telemetry::steady_now_ns()) == FloorController::Phase::kRampUp &&
         !s.signalled())
    feed.turn();
  r.ramp_up_s = seconds_since(t0);
  if (!s.signalled() && s.start()) s.run([&] { feed.turn(); });
  const int64_t t1 = telemetry::steady_now_ns();
  c.ramp_down(t1, feed.recent_w());
  while (c.phase(telemetry::steady_now_ns()) == FloorController::Phase::kRampDown &&
         !s.signalled())
    feed.turn();
  r.ramp_down_s = seconds_since(t1);
  filler.set_intensity(0);
  r.interrupted = s.signalled();
  r.exit_code = s.finish();
  r.filled_s = filler.filled_s();
  r.filler_failure = filler.failure();
  r.learned = c.learned();
  return r;
}

}  // namespace powershape::shape
