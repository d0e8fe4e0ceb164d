// How far the LM head's loss, dX and dW lie from an fp64 reference at real shapes: for each shape,
// logit spread (random-init-like std 1; trained-like std 6) and chunk count, the op with dW in bf16
// (the default) and in fp32. The reference is computed on the GPU in fp64 (cuBLAS DGEMM, an fp64
// softmax) from the same bf16 inputs; errors are ||got - ref|| / ||ref||.
//   lmhead_accuracy [--shapes N,D,V;N,D,V...] [--chunks 1,2,8,16]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/lmhead.hpp"
#include "powershape/kernels/synthetic.cuh"
#include "powershape/util/int_list.hpp"
#include "powershape/workload/args.hpp"

using namespace powershape::kernels;

namespace {

#define CUBLAS_OK(x)                                                          \
  do {                                                                        \
    if ((x) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(#x " failed"); \
  } while (0)

template <class T>
struct Dev {
  explicit Dev(std::size_t n) : count(n) { PS_CUDA(cudaMalloc(&p, n * sizeof(T))); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  T* p = nullptr;
  std::size_t count;
};

__global__ void widen(const __nv_bfloat16* in, double* out, int64_t n, double scale) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = scale * __bfloat162float(in[i]);
}

__global__ void narrow(const double* in, __nv_bfloat16* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = __double2bfloat16(in[i]);
}

// One block a row: loss[row] = lse - z_t, and the row overwritten with (softmax - onehot) / n.
__global__ void softmax64(double* z, int64_t v, const int32_t* t, int64_t n, double* loss) {
  __shared__ double part[32];
  double* row = z + blockIdx.x * v;
  auto fold = [&](double x, bool max) {
    for (int o = 16; o > 0; o >>= 1) {
      const double y = __shfl_xor_sync(0xffffffffu, x, o);
      x = max ? fmax(x, y) : x + y;
    }
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = x;
    __syncthreads();
    const unsigned lane = threadIdx.x % 32;
    x = lane < blockDim.x / 32 ? part[lane] : (max ? -INFINITY : 0.0);
    for (int o = 16; o > 0; o >>= 1) {
      const double y = __shfl_xor_sync(0xffffffffu, x, o);
      x = max ? fmax(x, y) : x + y;
    }
    __syncthreads();
    return x;
  };
  double m = -INFINITY;
  for (int64_t i = threadIdx.x; i < v; i += blockDim.x) m = fmax(m, row[i]);
  m = fold(m, true);
  double s = 0;
  for (int64_t i = threadIdx.x; i < v; i += blockDim.x) s += exp(row[i] - m);
  s = fold(s, false);
  const double lse = m + log(s);
  const int32_t target = t[blockIdx.x];
  if (threadIdx.x == 0) loss[blockIdx.x] = lse - row[target];
  __syncthreads();
  for (int64_t i = threadIdx.x; i < v; i += blockDim.x)
    row[i] = (exp(row[i] - lse) - (i == target ? 1.0 : 0.0)) / static_cast<double>(n);
}

// sums[0] += sum (got - ref)^2, sums[1] += sum ref^2.
template <class T>
__global__ void error_sums(const T* got, const double* ref, int64_t n, double* sums) {
  double d = 0, r = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double g;
    if constexpr (sizeof(T) == 2) {
      g = __bfloat162float(got[i]);
    } else {
      g = got[i];
    }
    d += (g - ref[i]) * (g - ref[i]);
    r += ref[i] * ref[i];
  }
  for (int o = 16; o > 0; o >>= 1) {
    d += __shfl_xor_sync(0xffffffffu, d, o);
    r += __shfl_xor_sync(0xffffffffu, r, o);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(sums, d);
    atomicAdd(sums + 1, r);
  }
}

template <class T>
double rel_error(const T* got, const double* ref, int64_t n, Dev<double>& sums) {
  PS_CUDA(cudaMemset(sums.p, 0, 2 * sizeof(double)));
  error_sums<<<1024, 256>>>(got, ref, n, sums.p);
  PS_LAUNCHED();
  double h[2];
  PS_CUDA(cudaMemcpy(h, sums.p, sizeof h, cudaMemcpyDeviceToHost));
  return std::sqrt(h[0] / std::max(h[1], 1e-300));
}

void run_shape(int64_t n, int64_t d, int64_t v, double logit_std, const std::vector<int>& counts,
               cublasHandle_t blas) {
  // X uniform in [-1, 1] (variance 1/3); W uniform, scaled so that the logits have logit_std.
  Dev<__nv_bfloat16> x(n * d), w(v * d), dx(n * d), dw16(v * d);
  Dev<float> dw32(v * d), loss(1);
  fill_random_bf16(x.p, n * d, 11, 2.0f, nullptr);
  fill_random_bf16(w.p, v * d, 12, static_cast<float>(6 * logit_std / std::sqrt(double(d))),
                   nullptr);
  std::vector<int32_t> th(n);
  std::mt19937 rng(13);
  for (auto& t : th) t = static_cast<int32_t>(rng() % v);
  Dev<int32_t> t(n);
  PS_CUDA(cudaMemcpy(t.p, th.data(), n * 4, cudaMemcpyHostToDevice));

  // The fp64 reference.
  Dev<double> x64(n * d), w64(v * d), z64(n * v), dx64(n * d), dw64(v * d), loss64(n), sums(2);
  widen<<<1024, 256>>>(x.p, x64.p, n * d, 1.0);
  widen<<<1024, 256>>>(w.p, w64.p, v * d, 1.0);
  const double one = 1, zero = 0;
  CUBLAS_OK(cublasDgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, v, n, d, &one, w64.p, d, x64.p, d, &zero,
                        z64.p, v));
  softmax64<<<n, 256>>>(z64.p, v, t.p, n, loss64.p);
  PS_LAUNCHED();
  CUBLAS_OK(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, d, v, n, &one, x64.p, d, z64.p, v, &zero,
                        dw64.p, d));
  CUBLAS_OK(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, d, n, v, &one, w64.p, d, z64.p, v, &zero,
                        dx64.p, d));
  std::vector<double> lh(n);
  PS_CUDA(cudaMemcpy(lh.data(), loss64.p, n * 8, cudaMemcpyDeviceToHost));
  double ref_loss = 0;
  for (double l : lh) ref_loss += l / static_cast<double>(n);

  LmHead op;
  for (int chunks : counts) {
    for (bool fp32 : {false, true}) {
      LmHeadOptions o;
      o.chunks = chunks;
      o.dw_fp32 = fp32;
      const std::size_t ws_bytes = LmHead::workspace_bytes(n, d, v, o);
      Dev<char> ws(ws_bytes);
      LmHeadArgs a;
      a.x = x.p;
      a.w = w.p;
      a.targets = t.p;
      a.n = n;
      a.d = d;
      a.v = v;
      a.loss = loss.p;
      a.dx = dx.p;
      a.dw = fp32 ? static_cast<void*>(dw32.p) : static_cast<void*>(dw16.p);
      a.workspace = ws.p;
      a.workspace_bytes = ws_bytes;
      op.run(a, o, nullptr);
      float got = 0;
      PS_CUDA(cudaMemcpy(&got, loss.p, 4, cudaMemcpyDeviceToHost));
      const double e_dw =
          fp32 ? rel_error(dw32.p, dw64.p, v * d, sums) : rel_error(dw16.p, dw64.p, v * d, sums);
      const double e_dx = rel_error(dx.p, dx64.p, n * d, sums);
      std::printf("%6ldx%ldx%ld %5.1f %6d %5s %11.2e %11.2e %11.2e\n", static_cast<long>(n),
                  static_cast<long>(d), static_cast<long>(v), logit_std, chunks,
                  fp32 ? "fp32" : "bf16", std::abs(got - ref_loss) / std::abs(ref_loss), e_dx,
                  e_dw);
      std::fflush(stdout);
    }
  }
  // The bf16 inputs' own floor: the reference's dW rounded to bf16 once.
  narrow<<<1024, 256>>>(dw64.p, dw16.p, v * d);
  std::printf("%6ldx%ldx%ld %5.1f  (the fp64 dW rounded to bf16 once: %.2e)\n",
              static_cast<long>(n), static_cast<long>(d), static_cast<long>(v), logit_std,
              rel_error(dw16.p, dw64.p, v * d, sums));
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes = "16384,896,151936;4096,4096,128256;16384,4096,128256", chunks = "1,2,8,16";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--shapes") {
      shapes = argv[i + 1];
    } else if (a == "--chunks") {
      chunks = argv[i + 1];
    } else {
      std::fprintf(stderr, "lmhead_accuracy: unknown option %s (--shapes, --chunks)\n", argv[i]);
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "lmhead_accuracy: %s needs a value\n", argv[argc - 1]);
    return 2;
  }
  try {
    const std::vector<int> counts = powershape::util::parse_int_list(chunks, "--chunks");
    cublasHandle_t blas;
    CUBLAS_OK(cublasCreate(&blas));
    std::printf("%-20s %5s %6s %5s %11s %11s %11s\n", "N x D x V", "std", "chunks", "dW",
                "loss err", "dX err", "dW err");
    std::stringstream ss(shapes);
    for (std::string item; std::getline(ss, item, ';');) {
      const auto s = powershape::workload::parse_shape(item);
      for (double logit_std : {1.0, 6.0}) run_shape(s[0], s[1], s[2], logit_std, counts, blas);
    }
    cublasDestroy(blas);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lmhead_accuracy: %s\n", e.what());
    return 1;
  }
  return 0;
}
