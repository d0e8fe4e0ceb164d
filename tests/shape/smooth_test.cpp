#include "powershape/shape/smooth.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "powershape/analysis/power_input.hpp"
#include "powershape/analysis/swing.hpp"
#include "powershape/telemetry/clock.hpp"
#include "powershape/util/error.hpp"

namespace powershape::shape {
namespace {

// A filler that remembers each intensity it was set to.
class FakeFiller : public Filler {
 public:
  void set_intensity(double x) override {
    std::lock_guard lock(mu_);
    const int64_t now = telemetry::steady_now_ns();
    if (!log_.empty())
      filled_ += log_.back().second * static_cast<double>(now - log_.back().first) * 1e-9;
    log_.emplace_back(now, x);
    x_ = x;
  }
  double period_s() const override { return 0.002; }
  double filled_s() const override { return filled_; }
  std::string describe() const override { return "fake filler"; }
  std::string failure() const override { return {}; }
  double intensity() const { return x_; }
  std::vector<std::pair<int64_t, double>> log() const {
    std::lock_guard lock(mu_);
    return log_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<int64_t, double>> log_;
  std::atomic<double> x_{0};
  double filled_ = 0;
};

// One GPU drawing 100 W idle and 500 W more at the filler's full intensity; the job draws nothing.
class FilledSource : public telemetry::Source {
 public:
  explicit FilledSource(const FakeFiller& f) : f_(f) {
    infos_.resize(1);
    infos_[0].support.fill(telemetry::Status::kNotSupported);
    infos_[0].support[static_cast<std::size_t>(telemetry::Signal::kPowerInstant)] =
        telemetry::Status::kOk;
  }
  std::string describe() const override { return "filled"; }
  const std::vector<telemetry::DeviceInfo>& devices() const override { return infos_; }
  telemetry::Sample poll(int gpu, const telemetry::SignalSet&) override {
    telemetry::Sample s;
    s.gpu = gpu;
    s.t_ns = telemetry::steady_now_ns();
    s[telemetry::Signal::kPowerInstant] =
        telemetry::Reading::of(static_cast<int64_t>((100 + 500 * f_.intensity()) * 1000));
    return s;
  }

 private:
  const FakeFiller& f_;
  std::vector<telemetry::DeviceInfo> infos_;
};

monitor::SessionOptions session(std::vector<std::string> command) {
  monitor::SessionOptions o;
  o.sampler.period = std::chrono::milliseconds(2);
  o.sampler.stretch = 1;
  o.command = std::move(command);
  return o;
}

FloorOptions floor400(bool marked) {
  FloorOptions o;
  o.floor_w = 400;
  o.marked = marked;
  o.ramp_w_per_s = 2000;  // 300 W up in 0.15 s
  return o;
}

// Ten marked gaps of 50 ms: the floor ramps up first, the filler runs in the gaps only and learns
// the floor's intensity (0.6 on this GPU), the job's exit code comes back, and the filler ends at
// 0.
TEST(Smooth, FillsTheMarkedGapsBetweenTheRamps) {
  FakeFiller filler;
  FilledSource source(filler);
  monitor::Session s(source,
                     session({"sh", "-c",
                              "for i in 1 2 3 4 5 6 7 8 9 10; do "
                              "echo \"begin $i gap\" >\"$POWERSHAPE_CONTROL\"; sleep 0.05; "
                              "echo \"end $i gap\" >\"$POWERSHAPE_CONTROL\"; sleep 0.05; done; "
                              "exit 4"}),
                     [](const std::string& w) { ADD_FAILURE() << w; });
  FloorController c(floor400(true));
  SmoothOptions o;
  o.gap_region = "gap";
  o.turn_ms = 2;
  o.settle_ns = 4'000'000;
  const SmoothResult r = run_smoothed(s, filler, c, o);
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NEAR(r.ramp_up_s, 0.15, 0.1);
  EXPECT_GT(r.ramp_down_s, 0.15);
  EXPECT_NEAR(r.learned, 0.6, 0.08);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(filler.intensity(), 0);
  // In the job the filler ran for the gaps' half of the time, give or take the turns.
  const auto log = filler.log();
  const auto& regions = s.trace().regions;
  ASSERT_EQ(regions.size(), 10u);
  int on = 0, off = 0;
  for (std::size_t i = 1; i < log.size(); ++i) (log[i].second > 0 ? on : off) += 1;
  EXPECT_GT(on, 10);
  EXPECT_GT(off, 10);
  EXPECT_GT(r.filled_s, 0.2);
}

// Without marks, a job that draws nothing is one long gap: the filler runs throughout, at the
// floor's intensity.
TEST(Smooth, WithoutMarksHoldsTheFloorFromThePower) {
  FakeFiller filler;
  FilledSource source(filler);
  monitor::Session s(source, session({"sleep", "0.5"}),
                     [](const std::string& w) { ADD_FAILURE() << w; });
  auto fo = floor400(false);
  fo.ramp_w_per_s = 0;
  FloorController c(fo);
  SmoothOptions o;
  o.turn_ms = 2;
  o.settle_ns = 4'000'000;
  const SmoothResult r = run_smoothed(s, filler, c, o);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_LT(r.ramp_up_s, 0.1);
  EXPECT_NEAR(r.learned, 0.6, 0.05);
  EXPECT_NEAR(r.filled_s, 0.5 * 0.6, 0.1);
  EXPECT_EQ(filler.intensity(), 0);
}

// smooth_job sets the run up as `smooth` does: it says what it holds on which GPU, records the
// job (its exit, its trace) and hands back what the floor did.
TEST(Smooth, AJobRunsUnderTheFloorItSays) {
  auto owned = std::make_unique<FakeFiller>();
  FakeFiller& filler = *owned;
  FilledSource source(filler);
  SmoothJob job;
  job.command = {"sh", "-c", "sleep 0.3; exit 3"};
  job.floor = floor400(false);
  job.floor.ramp_w_per_s = 0;
  job.interval_ms = 2;
  std::vector<std::string> said;
  const SmoothRun run = smooth_job(
      source, [&] { return std::move(owned); }, job,
      [&](const std::string& l) { said.push_back(l); });
  EXPECT_EQ(run.result.exit_code, 3);
  EXPECT_FALSE(run.file_failed);
  EXPECT_GT(run.result.filled_s, 0.05);
  EXPECT_FALSE(run.trace.samples.empty());
  ASSERT_FALSE(said.empty());
  EXPECT_NE(said.front().find("a floor of 400 W on GPU 0"), std::string::npos) << said.front();
  EXPECT_NE(said.front().find("where the power falls below it"), std::string::npos);
}

// A floor the controller refuses is refused before the filler (the GPU) is opened.
TEST(Smooth, ABadFloorIsRefusedBeforeTheFillerOpens) {
  FakeFiller filler;
  FilledSource source(filler);
  SmoothJob job;
  job.command = {"true"};
  job.floor = floor400(false);
  job.floor.ramp_w_per_s = 0.05;  // would take hours to reach the floor
  bool opened = false;
  EXPECT_THROW(smooth_job(
                   source,
                   [&]() -> std::unique_ptr<Filler> {
                     opened = true;
                     return std::make_unique<FakeFiller>();
                   },
                   job, [](const std::string&) {}),
               Error);
  EXPECT_FALSE(opened);
}

// A job that draws 600 W whenever it runs (not stopped), on the FilledSource's GPU; it writes its
// pid to `pid_file` when it starts.
class JobSource : public FilledSource {
 public:
  JobSource(const FakeFiller& f, std::string pid_file)
      : FilledSource(f), pid_file_(std::move(pid_file)) {}
  telemetry::Sample poll(int gpu, const telemetry::SignalSet& want) override {
    telemetry::Sample s = FilledSource::poll(gpu, want);
    if (running()) s[telemetry::Signal::kPowerInstant] = telemetry::Reading::of(600'000);
    return s;
  }

 private:
  bool running() {
    if (pid_ <= 0) std::ifstream(pid_file_) >> pid_;
    if (pid_ <= 0) return false;
    std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
    std::string pid, name, state;
    stat >> pid >> name >> state;
    return stat && state != "T" && state != "Z";
  }
  std::string pid_file_;
  int pid_ = 0;
};

// A job that starts at 600 W from a 150 W floor, paced at 200 W/s over 0.5 s windows: its rise
// takes seconds of holds instead of a single step, and it still ends with its own code.
TEST(Smooth, PacesTheJobsRise) {
  const std::string pid_file = ::testing::TempDir() + "/powershape_paced_job.pid";
  std::remove(pid_file.c_str());
  FakeFiller filler;
  JobSource source(filler, pid_file);
  auto so = session({"sh", "-c", "echo $$ >" + pid_file + "; sleep 0.3; exec sleep 3"});
  so.own_group = true;
  so.sampler.max_drain_period = std::chrono::milliseconds(5);  // the pacer sees readings soon
  monitor::Session s(source, so, [](const std::string& w) { ADD_FAILURE() << w; });
  FloorOptions fo;
  fo.floor_w = 150;
  fo.start_intensity = 0.1;  // what holds 150 W on this GPU
  FloorController c(fo);
  PacerOptions po;
  po.ramp_w_per_s = 200;
  po.window_ns = 500'000'000;
  po.armed_below_w = 165;
  Pacer pacer(po);
  SmoothOptions o;
  o.turn_ms = 2;
  o.settle_ns = 4'000'000;
  const SmoothResult r = run_smoothed(s, filler, c, o, &pacer);
  std::remove(pid_file.c_str());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_GT(r.holds, 0);
  EXPECT_GT(r.held_s, 0.5);  // 450 W at 160 W/s: 2.8 s of rise, about half of it held
  EXPECT_LT(r.held_s, 3.0);
  EXPECT_FALSE(s.held());
  // The power's ramp over 0.5 s windows: 900 W/s unpaced; the readings' lag (tens of ms here) and
  // the floor's own step from idle add to the 200 W/s.
  const analysis::PowerInput in = analysis::trace_power(s.trace(), s.trace().samples.front().t_ns,
                                                        s.trace().samples.back().t_ns, 0);
  EXPECT_LT(analysis::ramp_rates(in.power, 0.5).up_max_w_per_s, 400);
}

TEST(Smooth, RefusesADeviceTheSourceLacks) {
  FakeFiller filler;
  FilledSource source(filler);
  monitor::Session s(source, session({"true"}), [](const std::string&) {});
  FloorController c(floor400(false));
  SmoothOptions o;
  o.gpu = 1;
  EXPECT_THROW(run_smoothed(s, filler, c, o), Error);
}

}  // namespace
}  // namespace powershape::shape
