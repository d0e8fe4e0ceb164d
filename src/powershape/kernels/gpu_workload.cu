#include "powershape/kernels/gpu_workload.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/event_pair.hpp"
#include "powershape/kernels/gemm.hpp"
#include "powershape/kernels/lmhead.hpp"
#include "powershape/kernels/synthetic.cuh"

namespace powershape::kernels {
using workload::Spec;

namespace {

constexpr int64_t kBurstSize = 4096;  // square-wave bursts are 4096^3 products, as in data/h200
constexpr int64_t kStreamBytes = int64_t{1} << 30;

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(int64_t bytes) {
    if (cudaMalloc(&p, static_cast<std::size_t>(bytes)) != cudaSuccess) {
      throw std::runtime_error("cannot allocate " + std::to_string(bytes >> 20) + " MiB on the GPU");
    }
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p(o.p) { o.p = nullptr; }
  __nv_bfloat16* bf16() const { return static_cast<__nv_bfloat16*>(p); }
};

}  // namespace

struct GpuWorkload::Impl {
  Spec spec;
  Gemm gemm;
  LmHead lmhead;
  LmHeadArgs args;
  std::vector<DeviceBuffer> bufs;
  int burst_products = 0;
  double gap_s = 0, gap_bytes = 0, flops = 0;

  DeviceBuffer& add(int64_t bytes) {
    bufs.emplace_back(bytes);
    return bufs.back();
  }

  // One iteration; square waves time their burst between `burst`.
  void iteration(EventPair* burst) {
    switch (spec.kind) {
      case Spec::Kind::kProducts: {
        const int64_t n = spec.a;
        gemm.run(false, false, n, n, n, bufs[0].p, n, bufs[1].p, n, bufs[2].p, n, Out::kBf16, 1, 0, nullptr);
        break;
      }
      case Spec::Kind::kSquare: {
        const int64_t n = kBurstSize;
        burst->start();
        for (int i = 0; i < burst_products; ++i) {
          gemm.run(false, false, n, n, n, bufs[0].p, n, bufs[1].p, n, bufs[2].p, n, Out::kBf16, 1, 0, nullptr);
        }
        burst->stop();
        if (spec.memory_gap) {
          stream_bytes(bufs[3].p, kStreamBytes, gap_bytes, nullptr);
        } else {
          spin(static_cast<int64_t>(gap_s * 1e9), nullptr);
        }
        break;
      }
      case Spec::Kind::kMsm: {
        const int64_t rows = spec.a, d = spec.b, cols = spec.c;
        const int64_t per = (rows + spec.chunks - 1) / spec.chunks;
        auto* q = bufs[0].bf16();
        auto* k = bufs[1].bf16();
        auto* v = bufs[2].bf16();
        auto* s = bufs[3].bf16();
        auto* o = bufs[4].bf16();
        for (int64_t r0 = 0; r0 < rows; r0 += per) {
          const int64_t r = std::min(per, rows - r0);
          // S [r x cols] = Q_c K^T; column-major (cols x r) = K (as d x cols, transposed) * Q_c^T.
          gemm.run(true, false, cols, r, d, k, d, q + r0 * d, d, s, cols, Out::kBf16, 1, 0, nullptr);
          softmax_rows(s, r, cols, cols, nullptr);
          // O_c [r x d] = P V; column-major (d x r) = V^T (d x cols) * P^T (cols x r).
          gemm.run(false, false, d, r, cols, v, d, s, cols, o + r0 * d, d, Out::kBf16, 1, 0, nullptr);
        }
        break;
      }
      case Spec::Kind::kLmHead: {
        LmHeadOptions opt;
        opt.chunks = spec.chunks;
        opt.backward = spec.backward;
        lmhead.run(args, opt, nullptr);
        break;
      }
      case Spec::Kind::kCustom: break;
    }
  }
};

GpuWorkload::GpuWorkload(const workload::Plan& plan, double peak_flops_per_s, double peak_bytes_per_s)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.bufs.reserve(8);  // add() hands out references; no reallocation may move them
  m.spec = plan.spec;
  m.flops = plan.total_flops();
  const Spec& s = m.spec;
  auto fill = [](DeviceBuffer& b, int64_t n, uint64_t seed, float scale) {
    fill_random_bf16(b.bf16(), n, seed, scale, nullptr);
  };
  switch (s.kind) {
    case Spec::Kind::kCustom:
      throw std::invalid_argument("plan '" + plan.name + "' is a custom plan: only the simulator runs those");
    case Spec::Kind::kProducts:
    case Spec::Kind::kSquare: {
      const int64_t n = s.kind == Spec::Kind::kProducts ? s.a : kBurstSize;
      for (int i = 0; i < 3; ++i) fill(m.add(n * n * 2), n * n, static_cast<uint64_t>(i + 1), 2.0f);
      if (s.kind == Spec::Kind::kSquare) {
        const double product_flops = 2.0 * n * n * static_cast<double>(n);
        m.burst_products = std::max(1, static_cast<int>(std::lround(s.duty * s.period_s * peak_flops_per_s / product_flops)));
        m.flops = m.burst_products * product_flops;
        m.gap_s = (1 - s.duty) * s.period_s;
        m.gap_bytes = m.gap_s * peak_bytes_per_s;
        if (s.memory_gap) m.add(kStreamBytes);
      }
      break;
    }
    case Spec::Kind::kMsm: {
      const int64_t rows = s.a, d = s.b, cols = s.c, per = (rows + s.chunks - 1) / s.chunks;
      if (d % 8 != 0 || cols % 8 != 0) throw std::invalid_argument("msm: d and cols must be multiples of 8");
      fill(m.add(rows * d * 2), rows * d, 1, 1.0f);
      fill(m.add(cols * d * 2), cols * d, 2, 0.2f);
      fill(m.add(cols * d * 2), cols * d, 3, 1.0f);
      m.add(per * cols * 2);
      m.add(rows * d * 2);
      break;
    }
    case Spec::Kind::kLmHead: {
      const int64_t n = s.a, d = s.b, v = s.c;
      fill(m.add(n * d * 2), n * d, 1, 2.0f);
      fill(m.add(v * d * 2), v * d, 2, 0.1f);
      auto& t = m.add(n * 4);
      std::vector<int32_t> th(static_cast<std::size_t>(n));
      for (int64_t i = 0; i < n; ++i) th[static_cast<std::size_t>(i)] = static_cast<int32_t>((i * 7919) % v);
      PS_CUDA(cudaMemcpy(t.p, th.data(), th.size() * 4, cudaMemcpyHostToDevice));
      LmHeadOptions opt;
      opt.chunks = s.chunks;
      opt.backward = s.backward;
      const auto wsb = LmHead::workspace_bytes(n, d, v, opt);
      m.args.x = m.bufs[0].p;
      m.args.w = m.bufs[1].p;
      m.args.targets = m.bufs[2].p;
      m.args.n = n;
      m.args.d = d;
      m.args.v = v;
      m.args.loss = static_cast<float*>(m.add(64).p);
      m.args.dx = m.add(n * d * 2).p;
      m.args.dw = m.add(v * d * 4).p;
      m.args.workspace = m.add(static_cast<int64_t>(wsb)).p;
      m.args.workspace_bytes = wsb;
      break;
    }
  }
  PS_CUDA(cudaDeviceSynchronize());
}

GpuWorkload::~GpuWorkload() = default;

GpuWorkload::Run GpuWorkload::run_for(double seconds) {
  Run r;
  EventPair whole, burst;
  std::vector<double> ms;
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  double compute_ms = 0;
  while (std::chrono::steady_clock::now() < end) {
    ms.push_back(whole.time([&] { impl_->iteration(&burst); }));
    compute_ms += impl_->spec.kind == Spec::Kind::kSquare ? burst.ms() : ms.back();
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

std::pair<double, double> measure_peak_rates() {
  const int64_t n = 8192;
  DeviceBuffer a(n * n * 2), b(n * n * 2), c(n * n * 2), s(kStreamBytes);
  fill_random_bf16(a.bf16(), n * n, 1, 2.0f, nullptr);
  fill_random_bf16(b.bf16(), n * n, 2, 2.0f, nullptr);
  Gemm gemm;
  EventPair e;
  gemm.run(false, false, n, n, n, a.p, n, b.p, n, c.p, n, Out::kBf16, 1, 0, nullptr);
  const double products_ms = e.time([&] {
    for (int i = 0; i < 5; ++i) gemm.run(false, false, n, n, n, a.p, n, b.p, n, c.p, n, Out::kBf16, 1, 0, nullptr);
  });
  const double flops = 5 * 2.0 * n * n * static_cast<double>(n) / (products_ms * 1e-3);
  stream_bytes(s.p, kStreamBytes, 2.0 * kStreamBytes, nullptr);
  const double stream_ms = e.time([&] { stream_bytes(s.p, kStreamBytes, 8.0 * kStreamBytes, nullptr); });
  const double bytes = 8.0 * kStreamBytes / (stream_ms * 1e-3);
  return {flops, bytes};
}

}  // namespace powershape::kernels
