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
#include "powershape/kernels/synthetic.cuh"
#include "powershape/util/error.hpp"
#include "powershape/workload/steps.hpp"

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
  std::vector<workload::WorkloadStep> steps;
  Gemm gemm;
  LmHead lmhead;
  LmHeadArgs args;
  LmHeadOptions options;
  std::vector<DeviceBuffer> bufs;
  // What each kind's kernels read and write: products A B C; msm Q K V, one chunk of S, O; the
  // LM head (or its products alone) X W, the logits (one chunk), dX dW; a memory gap's stream.
  struct {
    __nv_bfloat16 *a = nullptr, *b = nullptr, *c = nullptr;
    __nv_bfloat16 *q = nullptr, *k = nullptr, *v = nullptr, *s = nullptr, *o = nullptr;
    __nv_bfloat16 *x = nullptr, *wt = nullptr, *logits = nullptr, *dx = nullptr;
    void* dw = nullptr;
    void* stream = nullptr;
  } mem;
  int64_t ld = 0;  // the LM head's logits row stride
  double flops = 0;
  std::size_t extra = 0;

  void* add(int64_t bytes) {
    bufs.emplace_back(bytes);
    return bufs.back().p;
  }
  __nv_bfloat16* random_bf16(int64_t n, uint64_t seed, float scale) {
    auto* p = static_cast<__nv_bfloat16*>(add(n * 2));
    fill_random_bf16(p, n, seed, scale, nullptr);
    return p;
  }

  void product(const workload::WorkloadStep& s) {
    using workload::Op;
    switch (s.op) {
      case Op::kProduct:
      case Op::kBurst:
        // C [m x n] = A [m x k] B [k x n], column-major, over the first elements of each buffer.
        gemm.run(false, false, s.m, s.n, s.k, mem.a, s.m, mem.b, s.k, mem.c, s.m, Out::kBf16, 1, 0,
                 nullptr);
        return;
      case Op::kQk:
        // S [r x cols] = Q_c K^T; column-major (cols x r) = K (as d x cols, transposed) * Q_c^T.
        gemm.run(true, false, s.n, s.m, s.k, mem.k, s.k, mem.q + s.row0 * s.k, s.k, mem.s, s.n,
                 Out::kBf16, 1, 0, nullptr);
        return;
      case Op::kPv:
        // O_c [r x d] = P V; column-major (d x r) = V^T (d x cols) * P^T (cols x r).
        gemm.run(false, false, s.n, s.m, s.k, mem.v, s.n, mem.s, s.k, mem.o + s.row0 * s.n, s.n,
                 Out::kBf16, 1, 0, nullptr);
        return;
      case Op::kLogits:
        // logits_c [r x V] = X_c W^T: (V x r) = W^T-as-stored * X_c^T.
        gemm.run(true, false, s.n, s.m, s.k, mem.wt, s.k, mem.x + s.row0 * s.k, s.k,
                 mem.logits + s.row0 * ld, ld, Out::kBf16, 1, 0, nullptr);
        return;
      case Op::kDx:
        // dX_c [r x D] = dlogits_c W: (D x r) = W^T (D x V) * dlogits_c^T (V x r).
        gemm.run(false, false, s.n, s.m, s.k, mem.wt, s.n, mem.logits + s.row0 * ld, ld,
                 mem.dx + s.row0 * s.n, s.n, Out::kBf16, 1, 0, nullptr);
        return;
      case Op::kDw:
        // dW [V x D] (+)= dlogits_c^T X_c: (D x V) = X_c^T (D x r) * dlogits_c (r x V), in the
        // step's dtype, accumulated where it says (from the second chunk on, as the op does).
        gemm.run(false, true, s.n, s.m, s.k, mem.x + s.row0 * s.n, s.n, mem.logits + s.row0 * ld,
                 ld, mem.dw, s.n, s.result_bytes == 4 ? Out::kFp32 : Out::kBf16, 1,
                 s.accumulate ? 1 : 0, nullptr);
        return;
      default:
        throw std::logic_error(std::string("no product for step ") + workload::op_name(s.op));
    }
  }

  // One step's kernels on the default stream; after(kernel) is called once each kernel that is
  // timed on its own is launched (the LM head's steps one by one).
  template <class After>
  void launch(const workload::WorkloadStep& s, After&& after) {
    using workload::Op;
    switch (s.op) {
      case Op::kSoftmax:
        softmax_rows(mem.s, s.m, s.n, s.n, nullptr);
        break;
      case Op::kStream:
        stream_bytes(mem.stream, kStreamBytes, s.bytes, nullptr);
        break;
      case Op::kSpin:
        spin(static_cast<int64_t>(s.seconds * 1e9), nullptr);
        return;  // an idle gap, not a kernel to time
      case Op::kLmHead: {
        const auto& l = std::get<workload::LmHead>(w.kind);
        lmhead.run(args, options, nullptr, [&](const LmHeadStep& x) {
          after(workload::kernel_of(workload::phase_of(x, l)));
        });
        return;
      }
      default:
        product(s);
    }
    after(workload::kernel_of(workload::phase_of(s)));
  }

  // One iteration; a square wave's burst is timed between `burst`.
  void iteration(EventPair* burst) {
    bool in_burst = false;
    for (const auto& s : steps) {
      const bool b = s.op == workload::Op::kBurst;
      if (b != in_burst) (b ? burst->start() : burst->stop());
      in_burst = b;
      launch(s, [](const workload::KernelTime&) {});
    }
    if (in_burst) burst->stop();
  }

  void allocate();
};

void GpuWorkload::Impl::allocate() {
  if (const auto* p = std::get_if<workload::Products>(&w.kind)) {
    mem.a = random_bf16(p->size * p->size, 1, 2.0f);
    mem.b = random_bf16(p->size * p->size, 2, 2.0f);
    mem.c = random_bf16(p->size * p->size, 3, 2.0f);
  } else if (const auto* sq = std::get_if<workload::Square>(&w.kind)) {
    const int64_t n = workload::SquareSizing::kBurstSize;
    mem.a = random_bf16(n * n, 1, 2.0f);
    mem.b = random_bf16(n * n, 2, 2.0f);
    mem.c = random_bf16(n * n, 3, 2.0f);
    if (sq->gap == workload::Gap::kMemory) mem.stream = add(kStreamBytes);
  } else if (const auto* m = std::get_if<workload::Msm>(&w.kind)) {
    if (m->width % 8 != 0 || m->cols % 8 != 0)
      throw invalid_input("msm: d and cols must be multiples of 8");
    mem.q = random_bf16(m->rows * m->width, 1, 1.0f);
    mem.k = random_bf16(m->cols * m->width, 2, 0.2f);
    mem.v = random_bf16(m->cols * m->width, 3, 1.0f);
    mem.s = static_cast<__nv_bfloat16*>(
        add(workload::rows_per_chunk(m->rows, w.chunks) * m->cols * 2));  // one chunk
    mem.o = static_cast<__nv_bfloat16*>(add(m->rows * m->width * 2));
  } else if (const auto* p = std::get_if<workload::LmHeadProducts>(&w.kind)) {
    ld = workload::lmhead_row_stride(p->vocab);
    mem.x = random_bf16(p->tokens * p->width, 1, 2.0f);
    mem.wt = random_bf16(p->vocab * p->width, 2, 0.1f);
    mem.logits = random_bf16(p->tokens * ld, 3, 0.01f);  // which stand for the dlogits too
    mem.dx = static_cast<__nv_bfloat16*>(add(p->tokens * p->width * 2));
    mem.dw = add(p->vocab * p->width * 4);
  } else if (const auto* l = std::get_if<workload::LmHead>(&w.kind)) {
    const int64_t n = l->tokens, d = l->width, v = l->vocab;
    mem.x = random_bf16(n * d, 1, 2.0f);
    mem.wt = random_bf16(v * d, 2, 0.1f);
    void* targets = add(n * 4);
    std::vector<int32_t> th(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      th[static_cast<std::size_t>(i)] = static_cast<int32_t>((i * 7919) % v);
    PS_CUDA(cudaMemcpy(targets, th.data(), th.size() * 4, cudaMemcpyHostToDevice));
    options = workload::lmhead_options(*l, w.chunks);
    if (l->exp_in_product && !LmHead::exp_in_product(options))
      throw invalid_input("lmhead: this GPU cannot take the exponent in the product (sm_90 only)");
    args.x = mem.x;
    args.w = mem.wt;
    args.targets = targets;
    args.n = n;
    args.d = d;
    args.v = v;
    args.loss = static_cast<float*>(add(64));
    args.dx = add(n * d * 2);
    args.dw = add(v * d * 4);
    std::size_t free0 = 0, free1 = 0, total = 0;
    PS_CUDA(cudaDeviceSynchronize());
    PS_CUDA(cudaMemGetInfo(&free0, &total));
    args.workspace_bytes = LmHead::workspace_bytes(n, d, v, options);
    args.workspace = add(static_cast<int64_t>(args.workspace_bytes));
    lmhead.run(args, options, nullptr);  // the product plans and their workspace
    PS_CUDA(cudaDeviceSynchronize());
    PS_CUDA(cudaMemGetInfo(&free1, &total));
    extra = free0 - free1;
  }
}

GpuWorkload::GpuWorkload(const workload::Workload& w, const workload::Rates& rates)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.w = w;
  m.rates = rates;
  workload::workload_steps(w, rates,
                           [&](const workload::WorkloadStep& s) { m.steps.push_back(s); });
  // What an iteration computes: the plan's product phases, derived from the same steps.
  for (const auto& ph : workload::make_plan(w, rates).phases)
    if (ph.kind == workload::PhaseKind::kCompute) m.flops += ph.flops;
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
