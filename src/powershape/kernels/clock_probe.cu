#include <stdexcept>

#include "powershape/kernels/clock_probe.hpp"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/util/error.hpp"

namespace powershape::kernels {
namespace {

__device__ __forceinline__ uint64_t globaltimer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread: accumulate (cycles, ns) per bin; each bin's clock is cycles / ns x 1000 MHz.
__global__ void probe_kernel(double* mhz, int64_t bins, int64_t bin_ns) {
  const uint64_t t0 = globaltimer_ns();
  const uint64_t end = t0 + static_cast<uint64_t>(bins * bin_ns);
  uint64_t last_t = t0;
  long long last_c = clock64();
  int64_t bin = 0;
  double cycles = 0, ns = 0;
  while (true) {
    const uint64_t t = globaltimer_ns();
    const long long c = clock64();
    if (t != last_t) {  // %globaltimer ticks coarsely: count only intervals it resolved
      cycles += static_cast<double>(c - last_c);
      ns += static_cast<double>(t - last_t);
      last_t = t;
      last_c = c;
    }
    const int64_t b = static_cast<int64_t>((t - t0) / static_cast<uint64_t>(bin_ns));
    if (b != bin || t >= end) {
      if (bin < bins) mhz[bin] = ns > 0 ? cycles / ns * 1000.0 : 0.0;
      cycles = ns = 0;
      bin = b;
      if (t >= end) break;
    }
  }
}

}  // namespace

struct ClockProbe::Impl {
  double* d_mhz = nullptr;
  int64_t bins = 0;
  cudaStream_t stream = nullptr;
};

ClockProbe::ClockProbe(int64_t max_bins, int64_t bin_ns)
    : max_bins_(max_bins), bin_ns_(bin_ns), impl_(std::make_unique<Impl>()) {
  if (max_bins < 1 || bin_ns < 1000)
    throw invalid_input("clock probe: bins >= 1 and bin_ns >= 1000");
  PS_CUDA(cudaMalloc(&impl_->d_mhz, static_cast<std::size_t>(max_bins) * sizeof(double)));
}

ClockProbe::~ClockProbe() { cudaFree(impl_->d_mhz); }

void ClockProbe::start(CUstream_st* stream, int64_t duration_ns) {
  impl_->bins = std::min(max_bins_, std::max<int64_t>(1, duration_ns / bin_ns_));
  impl_->stream = stream;
  PS_CUDA(cudaMemsetAsync(impl_->d_mhz, 0, static_cast<std::size_t>(impl_->bins) * sizeof(double),
                          stream));
  probe_kernel<<<1, 1, 0, stream>>>(impl_->d_mhz, impl_->bins, bin_ns_);
  PS_LAUNCHED();
}

std::vector<double> ClockProbe::mhz() {
  std::vector<double> out(static_cast<std::size_t>(impl_->bins));
  PS_CUDA(cudaStreamSynchronize(impl_->stream));
  PS_CUDA(
      cudaMemcpy(out.data(), impl_->d_mhz, out.size() * sizeof(double), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace powershape::kernels
