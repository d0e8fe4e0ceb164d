#include "powershape/monitor/session.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <thread>
#include <utility>

#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"
#include "powershape/util/signals.hpp"

namespace powershape::monitor {

void check_periods(double interval_ms, double slow_interval_ms) {
  if (!(interval_ms >= 0.1 && interval_ms <= 60000))
    throw invalid_input("interval", "expected milliseconds between 0.1 and 60000");
  if (!(slow_interval_ms >= interval_ms && slow_interval_ms <= 60000))
    throw invalid_input("slow-interval", "expected milliseconds between the interval and 60000");
}

void set_periods(SessionOptions& o, double interval_ms, double slow_interval_ms) {
  check_periods(interval_ms, slow_interval_ms);
  o.sampler.period = std::chrono::nanoseconds(static_cast<int64_t>(interval_ms * 1e6));
  o.sampler.slow_period = std::chrono::nanoseconds(static_cast<int64_t>(slow_interval_ms * 1e6));
}

Session::Session(telemetry::Source& source, SessionOptions o, trace::Warn warn)
    : source_(source), o_(std::move(o)), warn_(std::move(warn)) {
  if (!(o_.turn_ms >= 1 && o_.turn_ms <= 1000))
    throw invalid_input("session: a turn's wait must be 1-1000 ms");
  const auto ms = [](std::chrono::nanoseconds d) { return static_cast<double>(d.count()) * 1e-6; };
  check_periods(ms(o_.sampler.period), ms(o_.sampler.slow_period));
  if (const char* outer = std::getenv(telemetry::kControlEnv)) outer_control_ = outer;
  marks_ = std::make_unique<trace::MarkReader>(warn_, outer_control_);
  trace_.source = source_.describe();
  trace_.devices = source_.devices();
  trace_.wall_minus_steady_ns = telemetry::wall_minus_steady_ns();
  if (!o_.csv_path.empty()) {
    csv_ = std::make_unique<trace::CsvWriter>(o_.csv_path, o_.every_row);
    try {
      csv_->header(trace_.source, trace_.devices);
      csv_->clock(trace_.wall_minus_steady_ns, telemetry::steady_now_ns());
    } catch (const std::runtime_error& e) {
      if (!csv_->reader_gone()) throw;
      // A reader that went after the first lines (`-o - | head -1`): as trace::Recording says it.
      warn_(std::string(e.what()) +
            " (its reader went); recording goes on in memory, the summary follows at the end");
      csv_.reset();
      reader_gone_ = true;
    }
  }
  sampler_ = std::make_unique<telemetry::Sampler>(source_, o_.sampler);
  recording_ = std::make_unique<trace::Recording>(*sampler_, trace_, csv_.get(), warn_);
}

Session::~Session() {
  if (held_ && child_) child_->signal(SIGCONT);  // never left stopped
  if (started_ && !finished_) sampler_->stop();
  util::forward_signals_to(0);
}

void Session::start_sampler() {
  if (started_) return;
  util::forward_signals_to(0);
  sampler_->start();
  started_ = true;
}

bool Session::start() {
  start_sampler();
  if (o_.command.empty()) return true;
  try {
    child_.emplace(
        o_.command,
        std::vector<std::string>{std::string(telemetry::kControlEnv) + "=" + fifo_.path()},
        o_.own_group);
  } catch (const std::exception& e) {
    warn_(e.what());
    failed_to_start_ = true;
    return false;
  }
  util::forward_signals_to(o_.own_group ? -child_->pid() : child_->pid());
  return true;
}

void Session::run(const std::function<void()>& each_turn) {
  if (!started_ || failed_to_start_) return;
  // Without a command, a reader that went (`monitor -o - | head`) ends the recording as a signal
  // would: nothing is left to write it for.
  while (!(child_ ? child_->poll() : util::received_signal() != 0 || reader_gone())) {
    turn(o_.turn_ms);
    if (each_turn) each_turn();
  }
}

std::vector<telemetry::UpdatePeriods> Session::update_periods() const {
  return telemetry::update_periods(*sampler_, source_.devices());
}

void Session::turn(int wait_ms) {
  pollfd p{fifo_.fd(), POLLIN, 0};
  ::poll(&p, 1, std::clamp(wait_ms, 0, 1000));
  auto closed = marks_->apply(fifo_, *sampler_);
  if (marked_to_ != nullptr) marked_to_->insert(marked_to_->end(), closed.begin(), closed.end());
  const std::size_t regions = trace_.regions.size();
  recording_->drain();
  if (!o_.regions_in_trace) trace_.regions.resize(regions);
}

Session::CommandRun Session::run_command(const std::vector<std::string>& command,
                                         int64_t deadline_ns, std::size_t max_regions) {
  start_sampler();
  CommandRun run;
  // At most max_regions kept, the latest: trimmed once twice as many have come, so that a job
  // marking a million steps a second costs a shift now and then, not one a turn.
  const auto keep_latest = [&](std::size_t past) {
    if (run.regions.size() > past)
      run.regions.erase(run.regions.begin(),
                        run.regions.end() - static_cast<std::ptrdiff_t>(max_regions));
  };
  run.begin_ns = telemetry::steady_now_ns();
  util::Child child(command, {std::string(telemetry::kControlEnv) + "=" + fifo_.path()},
                    /*own_group=*/true);
  util::forward_signals_to(-child.pid());
  // Woken by a mark or by the run's end (a pidfd, Linux 5.3 on), else every 5 ms for the deadline;
  // without a pidfd, every 0.2 ms: an unmarked run's time is its wall time, its end seen at once.
#ifdef SYS_pidfd_open
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, child.pid(), 0));
#else
  const int pidfd = -1;  // kernel headers before 5.3
#endif
  struct Close {
    int fd;
    ~Close() {
      if (fd >= 0) ::close(fd);
    }
  } close_pidfd{pidfd};
  marked_to_ = &run.regions;
  struct Unhook {
    std::vector<telemetry::Region>*& to;
    ~Unhook() { to = nullptr; }
  } unhook{marked_to_};
  while (!child.poll()) {
    turn(0);
    keep_latest(2 * max_regions);
    const int64_t now = telemetry::steady_now_ns();
    if (deadline_ns > 0 && now > deadline_ns && run.stopped_ns == 0) {
      child.signal(SIGTERM);
      run.stopped_ns = now;
    } else if (run.stopped_ns > 0 && now - run.stopped_ns > 2'000'000'000) {
      child.signal(SIGKILL);
    }
    if (pidfd >= 0) {
      pollfd p[2] = {{fifo_.fd(), POLLIN, 0}, {pidfd, POLLIN, 0}};
      ::poll(p, 2, 5);
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  util::forward_signals_to(0);
  run.end_ns = telemetry::steady_now_ns();
  child.signal(SIGKILL);  // what it left behind (a background child) would run into the next run
  run.exit_code = child.exit_code();
  turn(0);
  // A region it left open is not measured; an enclosing recorder was sent its begin, so its end.
  marks_->end_forwarded(sampler_->drop_open_regions(), run.end_ns);
  keep_latest(max_regions);
  return run;
}

void Session::hold(bool held) {
  if (held && signalled()) held = false;  // a held job would never see the signal it was sent
  if (held == held_ || !child_) return;
  // A release goes out even when the leader has ended: what it started may still be held.
  if (held && child_->poll()) return;
  child_->signal(held ? SIGSTOP : SIGCONT);
  held_ = held;
}

bool Session::signalled() const { return util::received_signal() != 0; }

int Session::finish() {
  if (finished_) return code_;
  finished_ = true;
  hold(false);
  if (started_) sampler_->stop();
  marks_->apply(fifo_, *sampler_);
  const int64_t now = telemetry::steady_now_ns();
  const auto left_open = sampler_->close_open_regions(now);
  for (const auto& r : left_open)
    warn_("region '" + r.name + "' began but never ended: closed at the end");
  marks_->end_forwarded(left_open, now);
  recording_->drain();
  recording_->finish();
  util::forward_signals_to(0);
  if (failed_to_start_) return code_ = 127;
  if (child_) return code_ = child_->exit_code();
  return code_ = util::received_signal() != 0 ? 128 + util::received_signal() : 0;
}

}  // namespace powershape::monitor
