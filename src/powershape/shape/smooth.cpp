#include "powershape/shape/smooth.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <optional>
#include <utility>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"

namespace powershape::shape {
namespace {

constexpr double kNoReading = std::numeric_limits<double>::quiet_NaN();

// Feeds the controller the readings the turns bring, each with the intensity the filler ran at
// over the time it covers, and sets the filler to what it decides.
class Feed {
 public:
  Feed(monitor::Session& s, Filler& f, FloorController& c, const SmoothOptions& o, Pacer* pacer)
      : s_(s),
        f_(f),
        c_(c),
        o_(o),
        pacer_(pacer),
        signal_(signal_of(s.source().devices().at(o.gpu))) {
    // How far back a reading reaches: the driver's samples average 20 ms; the instantaneous
    // field is refreshed every ~100 ms on Hopper, the usage is a 1 s mean.
    settle_ns_ = o.settle_ns > 0                               ? o.settle_ns
                 : signal_ == telemetry::Signal::kDriverPower  ? 25'000'000
                 : signal_ == telemetry::Signal::kPowerInstant ? 150'000'000
                                                               : 1'100'000'000;
    schedule_.push_back({0, 0.0});
  }

  void turn() {
    s_.turn(o_.turn_ms);
    const int64_t now = telemetry::steady_now_ns();
    const auto& samples = s_.trace().samples;
    for (; seen_ < samples.size(); ++seen_) {
      const auto& r = samples[seen_];
      if (r.gpu != o_.gpu || !r[signal_].ok()) continue;
      waiting_.push_back({r.t_ns, static_cast<double>(r[signal_].value) * 1e-3});
    }
    // A reading is judged once the turn after it has passed: a gap's end is seen at the turn
    // after the job's mark, and the filler ran until then.
    const int64_t guard = 2 * int64_t{o_.turn_ms} * 1'000'000;
    std::sort(waiting_.begin(), waiting_.end());
    while (!waiting_.empty() && waiting_.front().first + guard <= now) {
      const auto [t, w] = waiting_.front();
      waiting_.pop_front();
      c_.observe(t, w, ran(t - settle_ns_, t + guard));
      if (pacer_) pacer_->observe(t, w);
      last_w_ = w;
      recent_.push_back({t, w});
    }
    const bool gap = !o_.gap_region.empty() && s_.region_open(o_.gap_region);
    const double x = c_.decide(now, gap);
    if (x != schedule_.back().second) schedule_.push_back({now, x});
    f_.set_intensity(x);
    // Paced from the job's start: the floor's own ramp before it is no rise of the job's.
    if (pacer_ && job_running_) hold(pacer_->hold(now) && !s_.signalled(), now);
    while (!recent_.empty() && recent_.front().first < now - 1'000'000'000) recent_.pop_front();
    while (schedule_.size() > 1 && schedule_[1].first < now - 2 * settle_ns_ - 1'000'000'000)
      schedule_.pop_front();
  }
  // The mean of the last second's readings (the last reading where there is none).
  double recent_w() const {
    if (recent_.empty()) return last_w_;
    double sum = 0;
    for (const auto& [t, w] : recent_) sum += w;
    return sum / static_cast<double>(recent_.size());
  }
  bool any() const { return !std::isnan(last_w_); }
  void job_started() { job_running_ = true; }
  // Lets a held job go on, and counts how long it was held.
  void release() {
    hold(false, telemetry::steady_now_ns());
    job_running_ = false;
  }
  double held_s() const { return held_s_; }
  int holds() const { return holds_; }

 private:
  static telemetry::Signal signal_of(const telemetry::DeviceInfo& d) {
    for (const auto sig : {telemetry::Signal::kDriverPower, telemetry::Signal::kPowerInstant}) {
      if (d.support[static_cast<std::size_t>(sig)] == telemetry::Status::kOk) return sig;
    }
    return telemetry::Signal::kPowerUsage;
  }
  void hold(bool held, int64_t now) {
    if (held == s_.held()) return;
    s_.hold(held);
    if (!s_.held() && held_since_ >= 0) {
      held_s_ += static_cast<double>(now - held_since_) * 1e-9;
      held_since_ = -1;
    } else if (s_.held()) {
      held_since_ = now;
      ++holds_;
    }
  }
  // The intensity set throughout [from, to], or NaN where it changed then.
  double ran(int64_t from, int64_t to) const {
    double x = kNoReading;
    for (const auto& [t, v] : schedule_) {
      if (t <= from) {
        x = v;
      } else if (t <= to) {
        return kNoReading;
      }
    }
    return x;
  }

  monitor::Session& s_;
  Filler& f_;
  FloorController& c_;
  const SmoothOptions& o_;
  Pacer* pacer_;
  telemetry::Signal signal_;
  bool job_running_ = false;
  int64_t held_since_ = -1;
  double held_s_ = 0;
  int holds_ = 0;
  int64_t settle_ns_;
  std::size_t seen_ = 0;
  double last_w_ = kNoReading;
  std::deque<std::pair<int64_t, double>> waiting_, recent_, schedule_;
};

double seconds_since(int64_t t0) {
  return static_cast<double>(telemetry::steady_now_ns() - t0) * 1e-9;
}

}  // namespace

SmoothResult run_smoothed(monitor::Session& s, Filler& filler, FloorController& c,
                          const SmoothOptions& o, Pacer* pacer) {
  if (!(o.turn_ms >= 1 && o.turn_ms <= 1000)) throw invalid_input("turn: expected 1-1000 ms");
  if (o.gpu < 0 || o.gpu >= static_cast<int>(s.source().devices().size()))
    throw invalid_input("gpu: the source has no device " + std::to_string(o.gpu));
  struct Stop {  // the filler stops however this ends
    Filler& f;
    ~Stop() { f.set_intensity(0); }
  } stop{filler};
  SmoothResult r;
  Feed feed(s, filler, c, o, pacer);
  s.start_sampler();
  // The power found: the first reading, waited for at most a second.
  const int64_t t0 = telemetry::steady_now_ns();
  while (!feed.any() && seconds_since(t0) < 1 && !s.signalled()) feed.turn();
  c.ramp_up(telemetry::steady_now_ns(), feed.recent_w());
  while (c.phase(telemetry::steady_now_ns()) == FloorController::Phase::kRampUp && !s.signalled())
    feed.turn();
  r.ramp_up_s = seconds_since(t0);
  if (!s.signalled() && s.start()) {
    feed.job_started();
    s.run([&] { feed.turn(); });
  }
  feed.release();
  const int64_t t1 = telemetry::steady_now_ns();
  // From the job's last second, or from where a long low phase's fall has come to.
  c.ramp_down(t1, std::max(feed.recent_w(), c.target_w(t1)));
  while (c.phase(telemetry::steady_now_ns()) == FloorController::Phase::kRampDown && !s.signalled())
    feed.turn();
  r.ramp_down_s = seconds_since(t1);
  filler.set_intensity(0);
  r.interrupted = s.signalled();
  r.exit_code = s.finish();
  r.filled_s = filler.filled_s();
  r.filler_failure = filler.failure();
  r.learned = c.learned();
  r.held_s = feed.held_s();
  r.holds = feed.holds();
  return r;
}

void print_smoothed(std::FILE* out, const SmoothResult& r, const FloorOptions& fo, bool paced) {
  std::fprintf(
      out, "smooth: floor %.0f W%s; the job exited %d\n", fo.floor_w,
      fo.ramp_w_per_s > 0
          ? (", ramped at " + std::to_string(static_cast<int>(fo.ramp_w_per_s)) + " W/s").c_str()
          : "",
      r.exit_code);
  std::fprintf(
      out, "filler   %.2f s of products, ending at intensity %.2f; ramps %.1f s up, %.1f s down\n",
      r.filled_s, r.learned, r.ramp_up_s, r.ramp_down_s);
  if (paced)
    std::fprintf(out, "pacing   the job held %.2f s in %d holds, its rises kept under %.0f W/s\n",
                 r.held_s, r.holds, fo.ramp_w_per_s);
}

SmoothRun smooth_job(telemetry::Source& source,
                     const std::function<std::unique_ptr<Filler>()>& open_filler,
                     const SmoothJob& job, const std::function<void(const std::string&)>& say) {
  FloorController controller(job.floor);
  std::optional<Pacer> pacer;
  if (job.pace) {
    PacerOptions po;
    po.ramp_w_per_s = job.floor.ramp_w_per_s;
    po.window_ns = static_cast<int64_t>(job.ramp_window_s * 1e9);
    po.armed_below_w = job.floor.floor_w + controller.options().back_off_w;
    pacer.emplace(po);
  }
  const std::unique_ptr<Filler> filler = open_filler();
  monitor::SessionOptions so;
  so.sampler.period = std::chrono::nanoseconds(static_cast<int64_t>(job.interval_ms * 1e6));
  // The driver's 20 ms power readings, harvested every 40 ms: the floor's feedback (~1.7% of a
  // core on an H200; 2 s by default, which is too late to steer by).
  so.sampler.max_drain_period = std::chrono::milliseconds(40);
  so.csv_path = job.csv;
  so.command = job.command;
  so.turn_ms = 5;
  so.own_group = job.pace;  // a hold stops all the job started
  monitor::Session session(source, so, say);
  const telemetry::DeviceInfo& gpu = source.devices().at(0);
  char line[160];
  std::snprintf(line, sizeof line, "smooth: a floor of %.0f W on GPU %d (%s)", job.floor.floor_w,
                gpu.index, gpu.name.c_str());
  say(line +
      (job.floor.marked ? ", in the job's '" + job.gap_region + "' regions"
                        : std::string(", where the power falls below it")) +
      "; filler: " + filler->describe());
  SmoothOptions opts;
  opts.gap_region = job.gap_region;
  opts.turn_ms = so.turn_ms;
  SmoothRun run;
  run.result = run_smoothed(session, *filler, controller, opts, pacer ? &*pacer : nullptr);
  run.trace = std::move(session.trace());
  run.file_failed = session.file_failed();
  return run;
}

}  // namespace powershape::shape
