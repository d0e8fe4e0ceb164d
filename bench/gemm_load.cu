// A sustained bf16 matrix-product load: back-to-back cuBLASLt products (the LM head's path,
// kernels/gemm.hpp) of one shape for a given time, on random data of a given magnitude. Prints
// the first second's and the rest's throughput (CUDA events). With --shape and --op it runs any of
// the LM head's products alone, and with --scale on the LM head's data or on any other: what a
// product's power per flop owes to its shape and what to its data (data/h200/product_power).
//   gemm_load [--size N | --shape M,N,K] [--op NN|NT|TN|TT] [--out bf16|fp32] [--scale A,B]
//             [--seconds S]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/event_pair.hpp"
#include "powershape/kernels/gemm.hpp"
#include "powershape/kernels/synthetic.cuh"

namespace {

using powershape::kernels::Out;

struct Load {
  int64_t m = 8192, n = 8192, k = 8192;
  bool trans_a = false, trans_b = false;
  Out out = Out::kBf16;
  float scale_a = 1, scale_b = 1;  // uniform in [-scale/2, scale/2]
  double seconds = 10;
};

// The load itself; a failed CUDA or cuBLAS call throws, naming the call.
void run(const Load& l) {
  using namespace powershape::kernels;
  const int64_t a_elems = l.m * l.k, b_elems = l.k * l.n,
                d_bytes = l.m * l.n * (l.out == Out::kFp32 ? 4 : 2);
  void *a, *b, *d;
  PS_CUDA(cudaMalloc(&a, a_elems * 2));
  PS_CUDA(cudaMalloc(&b, b_elems * 2));
  PS_CUDA(cudaMalloc(&d, d_bytes));
  fill_random_bf16(static_cast<__nv_bfloat16*>(a), a_elems, 1, l.scale_a, nullptr);
  fill_random_bf16(static_cast<__nv_bfloat16*>(b), b_elems, 2, l.scale_b, nullptr);
  Gemm g;
  auto gemm = [&] {
    g.run(l.trans_a, l.trans_b, l.m, l.n, l.k, a, l.trans_a ? l.k : l.m, b, l.trans_b ? l.n : l.k,
          d, l.m, l.out, 1, 0, nullptr);
  };
  gemm();
  PS_CUDA(cudaDeviceSynchronize());
  const double flop =
      2.0 * static_cast<double>(l.m) * static_cast<double>(l.n) * static_cast<double>(l.k);
  // Batches of about 20 ms, timed with events; the first second and the rest reported apart.
  const int batch = std::max(1, static_cast<int>(20e-3 * 700e12 / flop));
  EventPair timer;
  double elapsed_ms = 0, first_ms = 0;
  long products = 0, first_products = 0;
  while (elapsed_ms < l.seconds * 1000) {
    elapsed_ms += timer.time([&] {
      for (int i = 0; i < batch; ++i) gemm();
    });
    products += batch;
    if (elapsed_ms < 1000) {
      first_ms = elapsed_ms;
      first_products = products;
    }
  }
  PS_CUDA(cudaGetLastError());
  const double rest_ms = elapsed_ms - first_ms;
  std::printf(
      "gemm_load: %lldx%lldx%lld bf16, %ld products in %.2f s: first second %.1f TFLOP/s, "
      "after it %.1f TFLOP/s\n",
      static_cast<long long>(l.m), static_cast<long long>(l.n), static_cast<long long>(l.k),
      products, elapsed_ms / 1000, first_products * flop / (first_ms * 1e9),
      rest_ms > 0 ? (products - first_products) * flop / (rest_ms * 1e9) : 0.0);
  cudaFree(a);
  cudaFree(b);
  cudaFree(d);
}

bool parse(int argc, char** argv, Load& l) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return false;
    const char* v = argv[++i];
    long long x = 0, y = 0, z = 0;
    if (a == "--size") {
      l.m = l.n = l.k = std::atoll(v);
    } else if (a == "--shape" && std::sscanf(v, "%lld,%lld,%lld", &x, &y, &z) == 3) {
      l.m = x, l.n = y, l.k = z;
    } else if (a == "--op" && std::string(v).size() == 2) {
      const std::string op = v;
      if ((op[0] != 'N' && op[0] != 'T') || (op[1] != 'N' && op[1] != 'T')) return false;
      l.trans_a = op[0] == 'T', l.trans_b = op[1] == 'T';
    } else if (a == "--out" && (std::string(v) == "bf16" || std::string(v) == "fp32")) {
      l.out = std::string(v) == "fp32" ? Out::kFp32 : Out::kBf16;
    } else if (a == "--scale" && std::sscanf(v, "%f,%f", &l.scale_a, &l.scale_b) == 2) {
    } else if (a == "--seconds") {
      l.seconds = std::atof(v);
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Load l;
  if (!parse(argc, argv, l)) {
    std::fprintf(stderr,
                 "gemm_load: bad arguments (expected --size N | --shape M,N,K, --op NN|NT|TN|TT, "
                 "--out bf16|fp32, --scale A,B, --seconds S)\n");
    return 2;
  }
  constexpr int64_t kMost = int64_t{1} << 21;  // a side; a product of two sides stays in int64
  if (l.m < 256 || l.n < 256 || l.k < 256 || l.m > kMost || l.n > kMost || l.k > kMost || l.m % 8 ||
      l.n % 8 || l.k % 8 || !(l.seconds > 0 && l.seconds <= 3600) ||
      !(l.scale_a > 0 && l.scale_b > 0)) {
    std::fprintf(stderr,
                 "gemm_load: sizes must be multiples of 8 from 256 to 2097152, "
                 "--seconds in (0, 3600], --scale positive\n");
    return 2;
  }
  try {
    run(l);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_load: %s\n", e.what());
    return 1;
  }
  return 0;
}
