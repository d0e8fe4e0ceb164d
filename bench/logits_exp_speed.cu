// The logits product with the softmax's exponent in its epilogue (logits_exp, then
// logits_exp_finish) against what it replaces, on the same inputs in the same run: cuBLASLt's
// logits product followed by the one-read cross-entropy pass. Also each product alone (the same
// flops), and the forward pass alone (the loss, no gradient written). Checks first that both ways
// give the same loss and log-sum-exp per row and the same gradient (row_scale x what is written)
// on sampled rows. Logits have standard deviation --std (1: random init; 6: trained-like).
//   logits_exp_speed [--shapes N,D,V;...] [--std S] [--rounds R]
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ce_params.hpp"
#include "powershape/kernels/cross_entropy.cuh"
#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/event_pair.hpp"
#include "powershape/kernels/gemm.hpp"
#include "powershape/kernels/kind_on_gpu.hpp"
#include "powershape/kernels/logits_exp.cuh"
#include "powershape/kernels/synthetic.cuh"

using namespace powershape::kernels;

namespace {

struct Shape {
  int64_t n, d, v;
};

std::vector<Shape> parse(const std::string& s) {
  std::vector<Shape> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ';');) {
    Shape sh{};
    if (std::sscanf(item.c_str(), "%ld,%ld,%ld", &sh.n, &sh.d, &sh.v) != 3 || sh.n < 1 ||
        sh.d < 8 || sh.d % 8 != 0 || sh.v < 1) {
      throw std::invalid_argument("--shapes: expected N,D,V;... (D a multiple of 8), found '" +
                                  item + "'");
    }
    out.push_back(sh);
  }
  return out;
}

template <class T>
T* device(std::size_t count) {
  T* p = nullptr;
  PS_CUDA(cudaMalloc(&p, count * sizeof(T)));
  return p;
}

std::vector<float> host(const float* d, int64_t n) {
  std::vector<float> h(static_cast<std::size_t>(n));
  PS_CUDA(cudaMemcpy(h.data(), d, h.size() * 4, cudaMemcpyDeviceToHost));
  return h;
}

// Sustained ms a call: calls repeated for at least 0.2 s between two events.
double sustained_ms(const std::function<void()>& body) {
  EventPair t;
  const double once = t.time(body);
  const int reps = std::max(3, static_cast<int>(200.0 / std::max(once, 1e-3)));
  return t.time([&] {
    for (int i = 0; i < reps; ++i) body();
  }) / reps;
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes = "16384,896,151936;4096,4096,128256;2048,896,151936;512,4096,128256";
  double logit_std = 1;
  int rounds = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--shapes") {
      shapes = argv[i + 1];
    } else if (k == "--std") {
      logit_std = std::stod(argv[i + 1]);
    } else if (k == "--rounds") {
      rounds = std::stoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "logits_exp_speed: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "logits_exp_speed: %s needs a value\n", argv[argc - 1]);
    return 2;
  }
  try {
    if (!logits_exp_available()) {
      std::fprintf(stderr, "logits_exp_speed: this GPU or build has no sm_90a kernel\n");
      return 1;
    }
    for (const Shape& sh : parse(shapes)) {
      const int64_t ld = (sh.v + 7) / 8 * 8;
      auto* x = device<__nv_bfloat16>(static_cast<std::size_t>(sh.n * sh.d));
      auto* w = device<__nv_bfloat16>(static_cast<std::size_t>(sh.v * sh.d));
      auto* ref = device<__nv_bfloat16>(static_cast<std::size_t>(sh.n * ld));
      auto* fused = device<__nv_bfloat16>(static_cast<std::size_t>(sh.n * ld));
      auto* targets = device<int32_t>(static_cast<std::size_t>(sh.n));
      auto* stats = device<float>(static_cast<std::size_t>(8 * sh.n));
      auto* valid = device<int>(1);
      auto* scratch = device<char>(logits_exp_scratch_bytes(sh.n, sh.v));
      // Uniform entries: std = scale / sqrt(12); logits' std = std(x) std(w) sqrt(D).
      const double sx = 1 / std::sqrt(12.0);
      const double sw = logit_std / (sx * std::sqrt(static_cast<double>(sh.d)));
      fill_random_bf16(x, sh.n * sh.d, 11, 1.0f, nullptr);
      fill_random_bf16(w, sh.v * sh.d, 12, static_cast<float>(sw * std::sqrt(12.0)), nullptr);
      std::vector<int32_t> t(static_cast<std::size_t>(sh.n));
      for (int64_t r = 0; r < sh.n; ++r)
        t[static_cast<std::size_t>(r)] = static_cast<int32_t>((r * 7919 + 13) % sh.v);
      t[0] = -100;  // one ignored token
      PS_CUDA(cudaMemcpy(targets, t.data(), t.size() * 4, cudaMemcpyHostToDevice));
      count_valid(targets, false, sh.n, -100, valid, nullptr);
      auto pass_for = [&](__nv_bfloat16* logits, float* st, bool grad) {
        return bench_pass(logits, ld, sh.v, targets, valid, st, sh.n, grad);
      };
      LogitsExpParams l{};
      l.x = x;
      l.w = w;
      l.rows = sh.n;
      l.d = sh.d;
      l.v = sh.v;
      l.ld = ld;
      l.write = true;
      l.out = fused;
      l.scratch = scratch;
      Gemm gemm;
      auto product = [&] {
        gemm.run(true, false, sh.v, sh.n, sh.d, w, sh.d, x, sh.d, ref, ld, Out::kBf16, 1, 0,
                 nullptr);
      };
      const CrossEntropyParams pr = pass_for(ref, stats, true),
                               pf = pass_for(fused, stats + 4 * sh.n, true);
      auto cublas_way = [&](bool grad) {
        product();
        cross_entropy_scaled(grad ? pr : pass_for(ref, stats, false), sh.n, nullptr);
      };
      auto fused_way = [&](bool grad) {
        LogitsExpParams lf = l;
        lf.write = grad;
        logits_exp(lf, pf, nullptr);
        logits_exp_finish(lf, grad ? pf : pass_for(fused, stats + 4 * sh.n, false), nullptr);
      };
      // The check: loss and lse a row, the gradient on sampled rows.
      {
        cublas_way(true);
        fused_way(true);
        PS_CUDA(cudaDeviceSynchronize());
        const auto a = host(stats, 4 * sh.n), b = host(stats + 4 * sh.n, 4 * sh.n);
        double dloss = 0, dlse = 0, dgrad = 0, gmax = 0;
        for (int64_t r = 0; r < sh.n; ++r) {
          const auto i = static_cast<std::size_t>(r);
          dloss = std::max(dloss, std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(1.0 * a[i])));
          const auto j = static_cast<std::size_t>(2 * sh.n + r);
          dlse = std::max(dlse, std::fabs(1.0 * a[j] - b[j]));
        }
        for (int64_t r = 0; r < sh.n; r += std::max<int64_t>(1, sh.n / 61)) {
          const auto ga = to_host(ref + r * ld, sh.v), gb = to_host(fused + r * ld, sh.v);
          const auto i = static_cast<std::size_t>(3 * sh.n + r);
          for (std::size_t k = 0; k < ga.size(); ++k) {
            const double u = a[i] * ga[k], v = b[i] * gb[k];
            dgrad = std::max(dgrad, std::fabs(u - v));
            gmax = std::max(gmax, std::fabs(u));
          }
        }
        std::printf("%ldx%ldx%ld std %.1f: loss %.2e rel, lse %.2e, grad %.2e of %.2e\n", sh.n,
                    sh.d, sh.v, logit_std, dloss, dlse, dgrad, gmax);
      }
      const double flops = 2.0 * static_cast<double>(sh.n) * sh.d * sh.v;
      std::vector<double> ms[6];
      for (int round = 0; round < rounds; ++round) {
        ms[0].push_back(sustained_ms(product));
        ms[1].push_back(sustained_ms([&] { cublas_way(true); }));
        ms[2].push_back(sustained_ms([&] { fused_way(true); }));
        ms[3].push_back(sustained_ms([&] { logits_exp(l, pf, nullptr); }));
        ms[4].push_back(sustained_ms([&] { cublas_way(false); }));
        ms[5].push_back(sustained_ms([&] { fused_way(false); }));
      }
      const char* names[6] = {"cuBLASLt product",        "cuBLASLt product + pass",
                              "fused (+ finish)",        "fused product alone",
                              "forward: product + pass", "forward: fused (+ finish)"};
      for (auto& m : ms) std::sort(m.begin(), m.end());
      const double base = ms[1][ms[1].size() / 2], prod = ms[0][ms[0].size() / 2];
      for (int i = 0; i < 6; ++i) {
        const double med = ms[i][ms[i].size() / 2];
        std::printf("  %-27s %8.3f ms  %6.1f TFLOP/s  / product+pass %.3f  / product %.3f\n",
                    names[i], med, flops / med * 1e-9, med / base, med / prod);
      }
      std::fflush(stdout);
      for (void* p :
           {static_cast<void*>(x), static_cast<void*>(w), static_cast<void*>(ref),
            static_cast<void*>(fused), static_cast<void*>(targets), static_cast<void*>(stats),
            static_cast<void*>(valid), static_cast<void*>(scratch)}) {
        PS_CUDA(cudaFree(p));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "logits_exp_speed: %s\n", e.what());
    return 1;
  }
  return 0;
}
