#pragma once
// In-process recording with named regions: what a program measures of its own parts (the C API
// and the Python package's Monitor stand on it). A sampler thread polls the source; regions may
// overlap and nest; a region's summary per GPU is computed when it ends, once telemetry past its
// end has arrived. Samples older than the earliest open region (less a margin) are let go, so a
// long training run holds minutes of telemetry, not hours, unless a region stays open for hours
// (then ~0.1 GB an hour a GPU at a 10 ms period). Thread-safe.
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "powershape/analysis/summary.hpp"
#include "powershape/telemetry/rapl.hpp"
#include "powershape/telemetry/region_stack.hpp"
#include "powershape/telemetry/sampler.hpp"

namespace powershape::analysis {

class Recorder {
 public:
  // Starts sampling. Throws std::runtime_error when the source has no devices.
  Recorder(std::unique_ptr<telemetry::Source> source, telemetry::SamplerOptions o);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  const std::vector<telemetry::DeviceInfo>& devices() const;
  // t_ns on the steady clock (CLOCK_MONOTONIC), from when the recording began to now (a second
  // of slack either way). Throws naming the name or the time when either is not.
  // At most RegionStack::kMaxOpen regions may be open: one more is refused.
  void begin(const std::string& name, int64_t t_ns);
  // Ends the innermost open region of that name at t_ns and returns its summary on every GPU.
  // Throws std::invalid_argument naming the region when none of that name is open, or when it
  // would end before it began.
  std::vector<Summary> end(const std::string& name, int64_t t_ns);
  // The summaries of the last region of that name that ended; empty when none has. The last of at
  // most kMaxNames names are kept: past that, the name that ended longest ago is forgotten.
  static constexpr std::size_t kMaxNames = 1024;
  std::vector<Summary> last(const std::string& name) const;
  // The CPU's RAPL zones (package-N, package-N dram), read when a region begins and ends (the
  // calls, not their t_ns, as Zeus reads them); none without powercap.
  const std::vector<telemetry::RaplZone>& cpu_zones() const { return rapl_.zones(); }
  // Each zone's energy (J) over the last region of that name that ended; none where a zone could
  // not be read (energy_uj is root's alone since Linux 5.10); empty when none has ended.
  std::vector<std::optional<double>> last_cpu_energy(const std::string& name) const;
  // Stops sampling; idempotent.
  void stop();

 private:
  void collect();  // with mu_ held
  void check_time(int64_t t_ns) const;
  int64_t opened_ns_ = 0;
  std::unique_ptr<telemetry::Source> source_;
  telemetry::SamplerOptions options_;
  telemetry::Sampler sampler_;
  mutable std::mutex mu_;
  // Moves the sampler's rows into the trace (every second, or sooner for a small buffer), so
  // that a long region does not fill the sampler's bounded buffer.
  std::thread collector_;
  std::condition_variable wake_;
  bool stopping_ = false;
  trace::Trace trace_;
  // Each open region with the RAPL counters at its begin.
  using Open = telemetry::RegionStack<std::vector<std::optional<uint64_t>>>;
  Open open_;
  struct Last {
    uint64_t seq = 0;  // the how-manyth region to end
    std::vector<Summary> summaries;
    std::vector<std::optional<double>> cpu;
  };
  std::map<std::string, Last> last_;
  std::multiset<int64_t> closing_;  // the begins of regions ended, not yet summed up
  uint64_t ended_ = 0;
  telemetry::RaplCounters rapl_;
};

}  // namespace powershape::analysis
