#pragma once
// The SM clock as the GPU itself sees it: one thread on one multiprocessor reads %globaltimer
// (ns) and clock64() (cycles) in a loop, and every `bin_ns` stores cycles / ns for that bin.
// Runs beside a workload on its own stream, so that the fast clock changes NVML's ~10 Hz readings
// hide become visible. Host API: no CUDA headers.
#include <cstdint>
#include <memory>
#include <vector>

struct CUstream_st;

namespace powershape::kernels {

class ClockProbe {
 public:
  // Room for `max_bins` bins of `bin_ns` each (10 us by default: 100 us was used for data/h200).
  explicit ClockProbe(int64_t max_bins, int64_t bin_ns = 10'000);
  ~ClockProbe();
  ClockProbe(const ClockProbe&) = delete;
  ClockProbe& operator=(const ClockProbe&) = delete;
  // Starts the probe on `stream` for `duration_ns` (at most max_bins x bin_ns); returns at once.
  void start(CUstream_st* stream, int64_t duration_ns);
  // Waits for it and returns the mean SM clock of each bin, MHz (0 where a bin saw no sample).
  std::vector<double> mhz();
  int64_t bin_ns() const { return bin_ns_; }

 private:
  int64_t max_bins_, bin_ns_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace powershape::kernels
