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
#include "powershape/kernels/lmhead.hpp"
#include "powershape/kernels/step_kernels.hpp"
#include "powershape/kernels/synthetic.cuh"
#include "powershape/kernels/workload_steps.hpp"
#include "powershape/util/error.hpp"

namespace powershape::kernels {
namespace {

constexpr int64_t kStreamBytes = int64_t{1} << 30;

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(int64_t bytes) {
    if (cudaMalloc(&p, static_cast<std::size_t>(bytes)) != cudaSuccess) {
      throw device_error("cannot allocate " + std::to_string(bytes >> 20) + " MiB on the GPU");
    }
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p(o.p) { o.p = nullptr; }
  __nv_bfloat16* bf16() const { return static_cast<__nv_bfloat16*>(p); }
};

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
  workload::Workload w;
  workload::Rates rates;
  std::vector<WorkloadStep> steps;
  Gemm gemm;
  LmHead lmhead;
  LmHeadArgs args;
  LmHeadOptions options;
  std::vector<DeviceBuffer> bufs;
  int64_t ld = 0;  // the LM head's logits row stride
  double flops = 0;
  std::size_t extra = 0;

  DeviceBuffer& add(int64_t bytes) {
    bufs.emplace_back(bytes);
    return bufs.back();
  }
  void* buf(std::size_t i) const { return bufs.at(i).p; }
  __nv_bfloat16* bf(std::size_t i) const { return bufs.at(i).bf16(); }

  void product(const WorkloadStep& s) {
    const std::string phase = s.phase;
    if (phase == "product" || phase == "burst") {
      // C [m x n] = A [m x k] B [k x n], column-major, over the first elements of each buffer.
      gemm.run(false, false, s.m, s.n, s.k, buf(0), s.m, buf(1), s.k, buf(2), s.m, Out::kBf16, 1, 0,
               nullptr);
    } else if (phase == "qk") {
      // S [r x cols] = Q_c K^T; column-major (cols x r) = K (as d x cols, transposed) * Q_c^T.
      gemm.run(true, false, s.n, s.m, s.k, buf(1), s.k, bf(0) + s.row0 * s.k, s.k, buf(3), s.n,
               Out::kBf16, 1, 0, nullptr);
    } else if (phase == "pv") {
      // O_c [r x d] = P V; column-major (d x r) = V^T (d x cols) * P^T (cols x r).
      gemm.run(false, false, s.n, s.m, s.k, buf(2), s.n, buf(3), s.k, bf(4) + s.row0 * s.n, s.n,
               Out::kBf16, 1, 0, nullptr);
    } else if (phase == "logits") {
      // buffers: x, w, logits, dx, dw; a chunk's rows start at row0 in each. logits_c [r x V] =
      // X_c W^T: (V x r) = W^T-as-stored * X_c^T.
      gemm.run(true, false, s.n, s.m, s.k, buf(1), s.k, bf(0) + s.row0 * s.k, s.k,
               bf(2) + s.row0 * ld, ld, Out::kBf16, 1, 0, nullptr);
    } else if (phase == "dx") {
      // dX_c [r x D] = dlogits_c W: (D x r) = W^T (D x V) * dlogits_c^T (V x r).
      gemm.run(false, false, s.n, s.m, s.k, buf(1), s.n, bf(2) + s.row0 * ld, ld,
               bf(3) + s.row0 * s.n, s.n, Out::kBf16, 1, 0, nullptr);
    } else if (phase == "dw") {
      // dW [V x D] (+)= dlogits_c^T X_c: (D x V) = X_c^T (D x r) * dlogits_c (r x V), in the
      // step's dtype, accumulated where it says (from the second chunk on, as the op does).
      gemm.run(false, true, s.n, s.m, s.k, bf(0) + s.row0 * s.n, s.n, bf(2) + s.row0 * ld, ld,
               buf(4), s.n, s.result_bytes == 4 ? Out::kFp32 : Out::kBf16, 1, s.accumulate ? 1 : 0,
               nullptr);
    } else {
      throw std::logic_error("no kernel for product '" + phase + "'");
    }
  }

  // One step's kernels on the default stream; after(kernel) is called once each kernel that is
  // timed on its own is launched (the LM head's steps one by one).
  template <class After>
  void launch(const WorkloadStep& s, After&& after) {
    switch (s.kind) {
      case WorkloadStep::kProduct:
        product(s);
        break;
      case WorkloadStep::kSoftmax:
        softmax_rows(bf(3), s.m, s.n, s.n, nullptr);
        break;
      case WorkloadStep::kStream:
        stream_bytes(buf(3), kStreamBytes, s.bytes, nullptr);
        break;
      case WorkloadStep::kSpin:
        spin(static_cast<int64_t>(s.seconds * 1e9), nullptr);
        return;  // an idle gap, not a kernel to time
      case WorkloadStep::kLmHead:
        lmhead.run(args, options, nullptr, [&](const LmHeadStep& l) {
          after(kernel_of(l, std::get<workload::LmHead>(w.kind)));
        });
        return;
    }
    after(kernel_of(s));
  }

  // One iteration; a square wave's burst is timed between `burst`.
  void iteration(EventPair* burst) {
    bool in_burst = false;
    for (const WorkloadStep& s : steps) {
      const bool b = std::strcmp(s.phase, "burst") == 0;
      if (b != in_burst) (b ? burst->start() : burst->stop());
      in_burst = b;
      launch(s, [](const workload::KernelTime&) {});
    }
    if (in_burst) burst->stop();
  }

  void allocate();
};

void GpuWorkload::Impl::allocate() {
  auto fill = [](DeviceBuffer& b, int64_t n, uint64_t seed, float scale) {
    fill_random_bf16(b.bf16(), n, seed, scale, nullptr);
  };
  auto random_bf16 = [&](int64_t n, uint64_t seed, float scale) {
    fill(add(n * 2), n, seed, scale);
  };
  if (const auto* p = std::get_if<workload::Products>(&w.kind)) {
    for (uint64_t i = 1; i <= 3; ++i) random_bf16(p->size * p->size, i, 2.0f);
  } else if (const auto* sq = std::get_if<workload::Square>(&w.kind)) {
    const int64_t n = workload::SquareSizing::kBurstSize;
    for (uint64_t i = 1; i <= 3; ++i) random_bf16(n * n, i, 2.0f);
    if (sq->gap == workload::Gap::kMemory) add(kStreamBytes);
  } else if (const auto* m = std::get_if<workload::Msm>(&w.kind)) {
    if (m->width % 8 != 0 || m->cols % 8 != 0)
      throw invalid_input("msm: d and cols must be multiples of 8");
    random_bf16(m->rows * m->width, 1, 1.0f);                        // Q
    random_bf16(m->cols * m->width, 2, 0.2f);                        // K
    random_bf16(m->cols * m->width, 3, 1.0f);                        // V
    add(workload::rows_per_chunk(m->rows, w.chunks) * m->cols * 2);  // S, one chunk
    add(m->rows * m->width * 2);                                     // O
  } else if (const auto* l = std::get_if<workload::LmHead>(&w.kind)) {
    const int64_t n = l->tokens, d = l->width, v = l->vocab;
    ld = (v + 7) / 8 * 8;
    random_bf16(n * d, 1, 2.0f);  // X
    random_bf16(v * d, 2, 0.1f);  // W
    if (l->products_only) {
      random_bf16(n * ld, 3, 0.01f);  // logits, which stand for the dlogits too
      add(n * d * 2);                 // dX
      add(v * d * 4);                 // dW
      return;
    }
    auto& t = add(n * 4);
    std::vector<int32_t> th(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      th[static_cast<std::size_t>(i)] = static_cast<int32_t>((i * 7919) % v);
    PS_CUDA(cudaMemcpy(t.p, th.data(), th.size() * 4, cudaMemcpyHostToDevice));
    options = lmhead_options(*l, w.chunks);
    args.x = buf(0);
    args.w = buf(1);
    args.targets = buf(2);
    args.n = n;
    args.d = d;
    args.v = v;
    args.loss = static_cast<float*>(add(64).p);
    args.dx = add(n * d * 2).p;
    args.dw = add(v * d * 4).p;
    std::size_t free0 = 0, free1 = 0, total = 0;
    PS_CUDA(cudaDeviceSynchronize());
    PS_CUDA(cudaMemGetInfo(&free0, &total));
    args.workspace_bytes = LmHead::workspace_bytes(n, d, v, options);
    args.workspace = add(static_cast<int64_t>(args.workspace_bytes)).p;
    lmhead.run(args, options, nullptr);  // the product plans and their workspace
    PS_CUDA(cudaDeviceSynchronize());
    PS_CUDA(cudaMemGetInfo(&free1, &total));
    extra = free0 - free1;
  }
}

GpuWorkload::GpuWorkload(const workload::Workload& w, const workload::Rates& rates)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.bufs.reserve(8);  // add() hands out references; no reallocation may move them
  m.w = w;
  m.rates = rates;
  workload_steps(w, rates, [&](const WorkloadStep& s) { m.steps.push_back(s); });
  for (const auto& s : m.steps) {
    if (s.kind == WorkloadStep::kProduct)
      m.flops +=
          2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  }
  if (const auto* l = std::get_if<workload::LmHead>(&w.kind); l != nullptr && !l->products_only) {
    m.flops = (l->backward ? 6.0 : 2.0) * static_cast<double>(l->tokens) *
              static_cast<double>(l->width) * static_cast<double>(l->vocab);
  }
  m.allocate();
  PS_CUDA(cudaDeviceSynchronize());
}

GpuWorkload::~GpuWorkload() = default;

std::size_t GpuWorkload::extra_bytes() const { return impl_->extra; }

GpuWorkload::Run GpuWorkload::run_for(double seconds) {
  Run r;
  EventPair whole, burst;
  const bool square = std::holds_alternative<workload::Square>(impl_->w.kind);
  std::vector<double> ms;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  double compute_ms = 0;
  while (std::chrono::steady_clock::now() < end) {
    ms.push_back(whole.time([&] { impl_->iteration(&burst); }));
    compute_ms += square ? burst.ms() : ms.back();
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
    for (const WorkloadStep& s : m.steps) {
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
  gemm.run(false, false, n, n, n, a.p, n, b.p, n, c.p, n, Out::kBf16, 1, 0, nullptr);
  const double products_ms = e.time([&] {
    for (int i = 0; i < 5; ++i)
      gemm.run(false, false, n, n, n, a.p, n, b.p, n, c.p, n, Out::kBf16, 1, 0, nullptr);
  });
  const double flops = 5 * 2.0 * n * n * static_cast<double>(n) / (products_ms * 1e-3);
  stream_bytes(s.p, kStreamBytes, 2.0 * kStreamBytes, nullptr);
  const double stream_ms =
      e.time([&] { stream_bytes(s.p, kStreamBytes, 8.0 * kStreamBytes, nullptr); });
  const double bytes = 8.0 * kStreamBytes / (stream_ms * 1e-3);
  return {flops, bytes};
}

}  // namespace powershape::kernels
