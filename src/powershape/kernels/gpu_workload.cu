#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "powershape/kernels/clock_probe.hpp"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/cuda_handles.hpp"
#include "powershape/kernels/event_pair.hpp"
#include "powershape/kernels/gemm.hpp"
#include "powershape/kernels/gpu_workload.hpp"
#include "powershape/kernels/kind_on_gpu.hpp"
#include "powershape/kernels/synthetic.cuh"
#include "powershape/util/error.hpp"
#include "powershape/workload/steps.hpp"

namespace powershape::kernels {
namespace {

constexpr int64_t kStreamBytes = int64_t{1} << 30;  // measure_peak_rates' copies

// The mean of the probe's bins (MHz, bin_ms each) over each window (start, end ms from the probe's
// start); window w belongs to kernel w % kernels. 0 for a kernel no bin with a sample covers.
std::vector<double> mean_clocks(const std::vector<double>& mhz, double bin_ms,
                                const std::vector<std::pair<double, double>>& windows,
                                std::size_t kernels) {
  std::vector<double> sum(kernels), n(kernels);
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const auto first = static_cast<std::size_t>(std::max(0.0, windows[w].first / bin_ms));
    const auto last = static_cast<std::size_t>(std::max(0.0, windows[w].second / bin_ms));
    for (std::size_t b = first; b <= last && b < mhz.size(); ++b) {
      if (mhz[b] <= 0) continue;  // a bin the probe saw no sample in
      sum[w % kernels] += mhz[b];
      n[w % kernels] += 1;
    }
  }
  for (std::size_t j = 0; j < kernels; ++j) sum[j] = n[j] > 0 ? sum[j] / n[j] : 0;
  return sum;
}

}  // namespace

struct GpuWorkload::Impl {
  std::vector<workload::WorkloadStep> steps;
  Gemm gemm;
  DeviceMemory memory;
  std::unique_ptr<KindOnGpu> kind;
  double flops = 0;

  // One step's kernels on the default stream; after(kernel) is called as each is enqueued (the LM
  // head op's one by one), none for an idle spin.
  template <class After>
  void launch(const workload::WorkloadStep& s, After&& after) {
    std::size_t i = 0;
    kind->launch(s, [&] { after(workload::kernel_of(s.phases.at(i++))); });
  }

  // One iteration; a square wave's burst (its products, which join in a plan) is timed between
  // `burst`.
  void iteration(EventPair* burst) {
    bool in_burst = false;
    for (const auto& s : steps) {
      if (s.joins != in_burst) (s.joins ? burst->start() : burst->stop());
      in_burst = s.joins;
      launch(s, [](const workload::KernelTime&) {});
    }
    if (in_burst) burst->stop();
  }
};

GpuWorkload::GpuWorkload(const workload::Workload& w, const workload::Rates& rates)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  workload::workload_steps(w, rates,
                           [&](const workload::WorkloadStep& s) { m.steps.push_back(s); });
  // What an iteration computes: the plan's product phases, derived from the same steps.
  for (const auto& ph : workload::make_plan(w, rates).phases)
    if (ph.kind == workload::PhaseKind::kCompute) m.flops += ph.flops;
  GpuContext gpu{m.gemm, m.memory};
  std::visit(
      [&](const auto& k) {
        using K = std::decay_t<decltype(k)>;
        if constexpr (!std::is_same_v<K, workload::Custom>) {
          try {
            m.kind = on_gpu(k, w.chunks, gpu);
          } catch (const Error& e) {
            // What did not fit, named: a chunked kind holds less at more chunks.
            const bool memory =
                K::kChunked && std::string(e.what()).rfind("cannot allocate", 0) == 0;
            rethrow_with(workload::name_of(w) + ": ",
                         memory ? Error(e.kind(),
                                        std::string(e.what()) + "; more chunks hold less at a time")
                                : e);
          }
        }
      },
      w.kind);
  EventPair burst;
  m.iteration(&burst);  // outside any measurement: the products' algorithms are chosen here
  PS_CUDA(cudaDeviceSynchronize());
}

GpuWorkload::~GpuWorkload() = default;

std::size_t GpuWorkload::extra_bytes() const { return impl_->kind->extra_bytes(); }

std::map<std::string, std::vector<float>> GpuWorkload::tensors() const {
  return impl_->kind->tensors();
}

GpuWorkload::Run GpuWorkload::run_for(double seconds) {
  Run r;
  EventPair whole, burst;
  // A workload with a burst (a square wave) computes in its bursts alone.
  const bool bursts = std::any_of(impl_->steps.begin(), impl_->steps.end(),
                                  [](const workload::WorkloadStep& s) { return s.joins; });
  std::vector<double> ms;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  double compute_ms = 0;
  while (std::chrono::steady_clock::now() < end) {
    ms.push_back(whole.time([&] { impl_->iteration(&burst); }));
    compute_ms += bursts ? burst.ms() : ms.back();
  }
  PS_CUDA(cudaGetLastError());
  r.iterations = static_cast<int>(ms.size());
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  r.ms_per_iteration = sorted.empty() ? 0 : sorted[sorted.size() / 2];
  r.compute_ms = compute_ms;
  r.compute_flops = impl_->flops * r.iterations;
  return r;
}

std::vector<workload::KernelTime> GpuWorkload::time_kernels(int iterations) {
  Impl& m = *impl_;
  EventList events;
  // One iteration, each kernel bracketed: an event before (after the spin of a gap, so that idle
  // time is not counted) and one after it. Waits for it; returns its kernels.
  const auto bracketed = [&] {
    std::size_t i = 0;
    std::vector<workload::KernelTime> seen;
    for (const auto& s : m.steps) {
      PS_CUDA(cudaEventRecord(events[2 * i]));
      m.launch(s, [&](const workload::KernelTime& k) {
        PS_CUDA(cudaEventRecord(events[2 * i + 1]));
        seen.push_back(k);
        ++i;
        PS_CUDA(cudaEventRecord(events[2 * i]));
      });
    }
    PS_CUDA(cudaEventSynchronize(events[2 * i]));
    return seen;
  };
  std::vector<workload::KernelTime> kernels;
  std::vector<std::vector<double>> ms;
  for (int it = 0; it < iterations; ++it) {
    auto seen = bracketed();
    if (it == 0) {
      kernels = std::move(seen);
      ms.resize(kernels.size());
    }
    for (std::size_t j = 0; j < kernels.size(); ++j)
      ms[j].push_back(elapsed_ms(events[2 * j], events[2 * j + 1]));
  }
  double iteration_ms = 0;
  for (std::size_t j = 0; j < kernels.size(); ++j) {
    std::sort(ms[j].begin(), ms[j].end());
    kernels[j].index = static_cast<int>(j);
    kernels[j].ms = ms[j][ms[j].size() / 2];
    iteration_ms += kernels[j].ms;
  }
  // Then each kernel's real clock: two more iterations with the clock probe running on its own
  // stream (one thread on one SM), timed from an event recorded just before it starts. Kept apart
  // from the timed iterations: the SM the probe holds would slow the widest products by ~1%.
  constexpr int kProbed = 2;
  constexpr int64_t kBinNs = 10'000;
  const auto span_ns = static_cast<int64_t>((iteration_ms * kProbed * 1.5 + 50) * 1e6);
  Stream side;
  EventList origin;
  ClockProbe probe(span_ns / kBinNs + 1, kBinNs);
  PS_CUDA(cudaEventRecord(origin[0], side.get()));
  probe.start(side.get(), span_ns);
  std::vector<std::pair<double, double>> windows;  // each kernel's start and end, ms from origin
  for (int it = 0; it < kProbed; ++it) {
    bracketed();
    for (std::size_t j = 0; j < kernels.size(); ++j)
      windows.emplace_back(elapsed_ms(origin[0], events[2 * j]),
                           elapsed_ms(origin[0], events[2 * j + 1]));
  }
  const auto clocks =
      mean_clocks(probe.mhz(), static_cast<double>(kBinNs) * 1e-6, windows, kernels.size());
  for (std::size_t j = 0; j < kernels.size(); ++j) kernels[j].real_mhz = clocks[j];
  return kernels;
}

workload::Rates measure_peak_rates() {
  const int64_t n = 8192;
  DeviceBuffer a(n * n * 2), b(n * n * 2), c(n * n * 2), s(kStreamBytes);
  fill_random_bf16(a.bf16(), n * n, 1, 2.0f, nullptr);
  fill_random_bf16(b.bf16(), n * n, 2, 2.0f, nullptr);
  Gemm gemm;
  EventPair e;
  gemm.run(false, false, n, n, n, a.get(), n, b.get(), n, c.get(), n, Out::kBf16, 1, 0, nullptr);
  const double products_ms = e.time([&] {
    for (int i = 0; i < 5; ++i)
      gemm.run(false, false, n, n, n, a.get(), n, b.get(), n, c.get(), n, Out::kBf16, 1, 0,
               nullptr);
  });
  const double flops = 5 * 2.0 * n * n * static_cast<double>(n) / (products_ms * 1e-3);
  stream_bytes(s.get(), kStreamBytes, 2.0 * kStreamBytes, nullptr);
  const double stream_ms =
      e.time([&] { stream_bytes(s.get(), kStreamBytes, 8.0 * kStreamBytes, nullptr); });
  const double bytes = 8.0 * kStreamBytes / (stream_ms * 1e-3);
  return {flops, bytes};
}

}  // namespace powershape::kernels
