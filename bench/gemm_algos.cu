// Whether cuBLASLt's first heuristic is its fastest algorithm for the LM head's products: for each
// product of one chunk (logits, dX, dW accumulated in bf16 with beta = 1) it times the heuristic's
// first ALGOS candidates, interleaved over rounds so that the clock and temperature treat them
// alike, and prints each one's median time and its ratio to the first candidate's in the same run.
//   gemm_algos [--shape N,D,V] [--chunks C] [--algos A] [--rounds R]
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/event_pair.hpp"
#include "powershape/kernels/synthetic.cuh"

namespace {

using namespace powershape::kernels;

struct Product {
  const char* name;
  bool ta, tb;
  int64_t m, n, k;
  float beta;
};

int64_t config_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t what) {
  int64_t v = 0;
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, what, &v, sizeof v, &written) !=
      CUBLAS_STATUS_SUCCESS)
    return -1;
  return written == 4 ? static_cast<int32_t>(v) : v;
}

void time_product(cublasLtHandle_t lt, const Product& p, const void* a, const void* b, void* d,
                  void* ws, std::size_t ws_bytes, int n_algos, int rounds) {
  cublasLtMatmulDesc_t desc;
  PS_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opa = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  PS_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
  PS_CUBLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
  cublasLtMatrixLayout_t la, lb, ld;
  const int64_t lda = p.ta ? p.k : p.m, ldb = p.tb ? p.n : p.k;
  PS_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, p.ta ? p.k : p.m, p.ta ? p.m : p.k, lda));
  PS_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, p.tb ? p.n : p.k, p.tb ? p.k : p.n, ldb));
  PS_CUBLAS(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, p.m, p.n, p.m));
  cublasLtMatmulPreference_t pref;
  PS_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  PS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &ws_bytes, sizeof ws_bytes));
  std::vector<cublasLtMatmulHeuristicResult_t> found(static_cast<std::size_t>(n_algos));
  int n = 0;
  PS_CUBLAS(
      cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, n_algos, found.data(), &n));
  const float alpha = 1;
  auto launch = [&](int i) {
    PS_CUBLAS(cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &p.beta, d, ld, d, ld,
                             &found[static_cast<std::size_t>(i)].algo, ws, ws_bytes, nullptr));
  };
  // A batch of about 30 ms a candidate, so that launch gaps do not count.
  const double flop = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * p.k;
  const int batch = std::max(1, static_cast<int>(30e-3 * 600e12 / flop));
  std::vector<std::vector<double>> ms(static_cast<std::size_t>(n));
  EventPair timer;
  for (int i = 0; i < n; ++i) launch(i);  // each once, untimed: plans and caches warm
  PS_CUDA(cudaDeviceSynchronize());
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < n; ++i) {
      ms[static_cast<std::size_t>(i)].push_back(timer.time([&] {
        for (int j = 0; j < batch; ++j) launch(i);
      }) / batch);
    }
  }
  std::printf("%s: m %lld n %lld k %lld beta %.0f, %d candidates, %d products a timing\n", p.name,
              static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
              p.beta, n, batch);
  double first = 0;
  for (int i = 0; i < n; ++i) {
    auto& v = ms[static_cast<std::size_t>(i)];
    std::sort(v.begin(), v.end());
    const double med = v[v.size() / 2];
    if (i == 0) first = med;
    const auto& algo = found[static_cast<std::size_t>(i)].algo;
    std::printf(
        "  #%-2d %8.3f ms %6.1f TFLOP/s  first/this %.3f  tile %lld stages %lld splitk %lld "
        "swizzle %lld cluster %lld\n",
        i, med, flop / med * 1e-9, first / med,
        static_cast<long long>(config_attr(algo, CUBLASLT_ALGO_CONFIG_TILE_ID)),
        static_cast<long long>(config_attr(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID)),
        static_cast<long long>(config_attr(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)),
        static_cast<long long>(config_attr(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)),
        static_cast<long long>(config_attr(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)));
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
}

int64_t parse_int(const std::string& s, const char* what) {
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0' || v < 1 || v > (1LL << 31))
    throw std::invalid_argument(std::string(what) + " must be a positive integer, not '" + s + "'");
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t tokens = 4096, width = 4096, vocab = 128256, chunks = 8, n_algos = 8, rounds = 5;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      const std::string val = argv[++i];
      if (arg == "--shape") {
        std::size_t c1 = val.find(','), c2 = val.rfind(',');
        if (c1 == std::string::npos || c1 == c2)
          throw std::invalid_argument("--shape is N,D,V, not '" + val + "'");
        tokens = parse_int(val.substr(0, c1), "N");
        width = parse_int(val.substr(c1 + 1, c2 - c1 - 1), "D");
        vocab = parse_int(val.substr(c2 + 1), "V");
      } else if (arg == "--chunks") {
        chunks = parse_int(val, "--chunks");
      } else if (arg == "--algos") {
        n_algos = std::min<int64_t>(parse_int(val, "--algos"), 64);
      } else if (arg == "--rounds") {
        rounds = std::min<int64_t>(parse_int(val, "--rounds"), 100);
      } else {
        throw std::invalid_argument("unknown option " + arg);
      }
    }
    const int64_t rows = (tokens + chunks - 1) / chunks;
    const int64_t ld = (vocab + 7) / 8 * 8;
    void *x, *w, *logits, *out, *ws;
    const std::size_t ws_bytes = 32u << 20;
    PS_CUDA(cudaMalloc(&x, rows * width * 2));
    PS_CUDA(cudaMalloc(&w, vocab * width * 2));
    PS_CUDA(cudaMalloc(&logits, rows * ld * 2));
    PS_CUDA(cudaMalloc(&out, std::max(rows * ld, vocab * width) * 2));
    PS_CUDA(cudaMalloc(&ws, ws_bytes));
    fill_random_bf16(static_cast<__nv_bfloat16*>(x), rows * width, 1, 1, nullptr);
    fill_random_bf16(static_cast<__nv_bfloat16*>(w), vocab * width, 2, 0.04f, nullptr);
    fill_random_bf16(static_cast<__nv_bfloat16*>(logits), rows * ld, 3, 0.001f, nullptr);
    cublasLtHandle_t lt;
    PS_CUBLAS(cublasLtCreate(&lt));
    std::printf("N %lld D %lld V %lld, %lld chunks of %lld rows\n", static_cast<long long>(tokens),
                static_cast<long long>(width), static_cast<long long>(vocab),
                static_cast<long long>(chunks), static_cast<long long>(rows));
    // The op's three products of one chunk, column-major as kernels/lmhead.cu launches them.
    time_product(lt, {"logits", true, false, vocab, rows, width, 0}, w, x, out, ws, ws_bytes,
                 static_cast<int>(n_algos), static_cast<int>(rounds));
    time_product(lt, {"dX", false, false, width, rows, vocab, 0}, w, logits, out, ws, ws_bytes,
                 static_cast<int>(n_algos), static_cast<int>(rounds));
    time_product(lt, {"dW", false, true, width, vocab, rows, 1}, x, logits, out, ws, ws_bytes,
                 static_cast<int>(n_algos), static_cast<int>(rounds));
    cublasLtDestroy(lt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gemm_algos: %s\n", e.what());
    return 1;
  }
  return 0;
}
