#include "powershape/trace/recording.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "powershape/telemetry/clock.hpp"

namespace powershape::trace {
namespace {

// One GPU whose power rises by 1 mW a poll, so no poll repeats the one before.
class RisingSource : public telemetry::Source {
 public:
  RisingSource() { infos_.resize(1); }
  std::string describe() const override { return "rising"; }
  const std::vector<DeviceInfo>& devices() const override { return infos_; }
  Sample poll(int gpu, const telemetry::SignalSet&) override {
    Sample s;
    s.gpu = gpu;
    s.t_ns = telemetry::steady_now_ns();
    s[telemetry::Signal::kPowerUsage] = telemetry::Reading::of(++polls_);
    return s;
  }

 private:
  std::vector<DeviceInfo> infos_;
  int64_t polls_ = 0;
};

telemetry::SamplerOptions fast() {
  telemetry::SamplerOptions o;
  o.period = std::chrono::milliseconds(1);
  return o;
}

void record_a_while(telemetry::Sampler& sampler) {
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  sampler.stop();
}

// Rows reach both the trace and the file.
TEST(Recording, DrainsIntoTheTraceAndTheFile) {
  const auto path = std::filesystem::temp_directory_path() / "powershape_recording_test.csv";
  RisingSource source;
  telemetry::Sampler sampler(source, fast());
  Trace t;
  std::vector<std::string> warnings;
  {
    CsvWriter csv(path.string(), true);
    Recording rec(sampler, t, &csv, [&](const std::string& w) { warnings.push_back(w); });
    record_a_while(sampler);
    rec.drain();
    rec.finish();
    EXPECT_FALSE(rec.file_failed());
  }
  ASSERT_GE(t.samples.size(), 2u);
  EXPECT_TRUE(warnings.empty());
  EXPECT_GT(std::filesystem::file_size(path), 0u);
  std::filesystem::remove(path);
}

// A file that fails (a full disk) is said once; the recording goes on in memory.
TEST(Recording, AFailedFileKeepsTheRecordingInMemory) {
  // A file that stops growing (ulimit -f: EFBIG, as a full disk fails), the signal ignored as
  // powershape ignores it.
  const std::string path = ::testing::TempDir() + "/powershape_recording_full.csv";
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  struct Restore {
    rlimit old;
    void (*handler)(int);
    ~Restore() {
      setrlimit(RLIMIT_FSIZE, &old);
      std::signal(SIGXFSZ, handler);
    }
  } restore{old, old_handler};
  RisingSource source;
  telemetry::Sampler sampler(source, fast());
  Trace t;
  std::vector<std::string> warnings;
  CsvWriter csv(path, true);
  Recording rec(sampler, t, &csv, [&](const std::string& w) { warnings.push_back(w); });
  record_a_while(sampler);
  rec.drain();
  const auto first = t.samples.size();
  sampler.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  sampler.stop();
  rec.drain();
  EXPECT_TRUE(rec.file_failed());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(path), std::string::npos) << warnings[0];
  EXPECT_GE(first, 2u);
  EXPECT_GT(t.samples.size(), first);
}

// Marks from the FIFO become regions, returned as they close; a bad line and an end without a
// begin are reported, each kind once a reader however often it comes.
TEST(Recording, MarksBecomeRegions) {
  RisingSource source;
  telemetry::Sampler sampler(source, fast());
  telemetry::ControlFifo fifo;
  const int64_t now = telemetry::steady_now_ns();
  telemetry::send_mark(fifo.path(), {true, now, "step"});
  telemetry::send_mark(fifo.path(), {false, now + 1000, "step"});
  for (int i = 0; i < 3; ++i) {
    telemetry::send_mark(fifo.path(), {false, now + 2000, "never-began"});
    telemetry::send_mark(fifo.path(), {true, now + 2000, "bad\x01name"});
  }
  std::vector<std::string> warnings;
  MarkReader marks([&](const std::string& w) { warnings.push_back(w); });
  const auto closed = marks.apply(fifo, sampler);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0], (telemetry::Region{"step", -1, now, now + 1000}));
  const auto regions = sampler.take_regions();
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].name, "step");
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("never-began"), std::string::npos);
  EXPECT_NE(warnings[1].find("ignored a region"), std::string::npos);
}

// A job that begins regions and never ends them: the oldest open one goes, said once.
TEST(Recording, BeginsPastTheOpenCapDropTheOldestSaidOnce) {
  RisingSource source;
  telemetry::Sampler sampler(source, fast());
  telemetry::ControlFifo fifo;
  const int64_t now = telemetry::steady_now_ns();
  const std::size_t n = telemetry::RegionStack<>::kMaxOpen + 2;
  for (std::size_t i = 0; i < n; ++i)
    telemetry::send_mark(fifo.path(), {true, now, "r" + std::to_string(i)});
  std::vector<std::string> warnings;
  MarkReader([&](const std::string& w) { warnings.push_back(w); }).apply(fifo, sampler);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("region 'r0' dropped: 1024 regions were open"), std::string::npos)
      << warnings[0];
  EXPECT_FALSE(sampler.is_open("r1"));
  EXPECT_TRUE(sampler.is_open("r2"));
}

// What a days-long recording lets go of: old samples, and regions and events past the last few.
TEST(Recording, ForgetBeforeKeepsTheRecentPart) {
  Trace t;
  for (int i = 0; i < 10; ++i) {
    Sample s;
    s.t_ns = i * 100;
    t.samples.push_back(s);
    Region r;
    r.name = "r" + std::to_string(i);
    t.regions.push_back(r);
  }
  forget_before(t, 500, 3);
  ASSERT_EQ(t.samples.size(), 5u);
  EXPECT_EQ(t.samples.front().t_ns, 500);
  ASSERT_EQ(t.regions.size(), 3u);
  EXPECT_EQ(t.regions.front().name, "r7");
}

}  // namespace
}  // namespace powershape::trace
