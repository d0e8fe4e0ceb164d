// A sustained bf16 matrix-product load: back-to-back N x N x N cuBLAS products for a given time,
// on random data. Prints the first second's and the rest's throughput (CUDA events).
//   gemm_load [--size N] [--seconds S]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/event_pair.hpp"

__global__ void fill_random(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = __float2bfloat16((static_cast<float>(x & 0xffff) / 65535.0f - 0.5f));
  }
}

// The load itself; a failed CUDA or cuBLAS call throws, naming the call.
void run(int n, double seconds) {
  size_t elems = static_cast<size_t>(n) * n;
  __nv_bfloat16 *a, *b, *c;
  PS_CUDA(cudaMalloc(&a, elems * sizeof(__nv_bfloat16)));
  PS_CUDA(cudaMalloc(&b, elems * sizeof(__nv_bfloat16)));
  PS_CUDA(cudaMalloc(&c, elems * sizeof(__nv_bfloat16)));
  fill_random<<<1024, 256>>>(a, elems, 1);
  fill_random<<<1024, 256>>>(b, elems, 2);
  PS_CUDA(cudaGetLastError());
  cublasHandle_t h;
  PS_CUBLAS(cublasCreate(&h));
  const float alpha = 1.0f, beta = 0.0f;
  auto gemm = [&] {
    PS_CUBLAS(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b,
                           CUDA_R_16BF, n, &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT));
  };
  gemm();
  PS_CUDA(cudaDeviceSynchronize());
  const double flop = 2.0 * n * n * static_cast<double>(n);
  // Time in batches of products with events; report the first second and the rest apart.
  powershape::kernels::EventPair timer;
  double elapsed_ms = 0, first_ms = 0;
  long products = 0, first_products = 0;
  while (elapsed_ms < seconds * 1000) {
    elapsed_ms += timer.time([&] {
      for (int i = 0; i < 10; ++i) gemm();
    });
    products += 10;
    if (elapsed_ms < 1000) {
      first_ms = elapsed_ms;
      first_products = products;
    }
  }
  PS_CUDA(cudaGetLastError());
  double rest_ms = elapsed_ms - first_ms;
  std::printf(
      "gemm_load: %dx%dx%d bf16, %ld products in %.2f s: first second %.1f TFLOP/s, "
      "after it %.1f TFLOP/s\n",
      n, n, n, products, elapsed_ms / 1000, first_products * flop / (first_ms * 1e9),
      (products - first_products) * flop / (rest_ms * 1e9));
  cublasDestroy(h);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
}

int main(int argc, char** argv) {
  int n = 8192;
  double seconds = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--size" && i + 1 < argc) {
      n = std::atoi(argv[++i]);
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "gemm_load: unknown argument '%s' (expected --size N, --seconds S)\n",
                   a.c_str());
      return 2;
    }
  }
  if (n < 256 || n % 8 != 0 || !(seconds > 0)) {
    std::fprintf(stderr,
                 "gemm_load: --size must be a multiple of 8 >= 256 and --seconds positive\n");
    return 2;
  }
  try {
    run(n, seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_load: %s\n", e.what());
    return 1;
  }
  return 0;
}
