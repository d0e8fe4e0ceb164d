#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/gemm.hpp"
#include "powershape/util/error.hpp"

namespace powershape::kernels {

Gemm::Gemm() {
  PS_CUBLAS(cublasLtCreate(&handle_));
  PS_CUDA(cudaMalloc(&workspace_, kWorkspaceBytes));
}

Gemm::~Gemm() {
  for (auto& [key, p] : plans_) {
    cublasLtMatmulDescDestroy(p.desc);
    cublasLtMatrixLayoutDestroy(p.a);
    cublasLtMatrixLayoutDestroy(p.b);
    cublasLtMatrixLayoutDestroy(p.d);
  }
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

const Gemm::Plan& Gemm::plan(const Key& key) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  auto [ta, tb, m, n, k, lda, ldb, ldd, out, bias] = key;
  Plan p{};
  PS_CUBLAS(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  PS_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
  PS_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
  if (bias) {
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;  // the bias has D's type by default
    PS_CUBLAS(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  }
  PS_CUBLAS(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_16BF, ta ? k : m, ta ? m : k, lda));
  PS_CUBLAS(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_16BF, tb ? n : k, tb ? k : n, ldb));
  PS_CUBLAS(cublasLtMatrixLayoutCreate(
      &p.d, out == static_cast<int>(Out::kFp32) ? CUDA_R_32F : CUDA_R_16BF, m, n, ldd));
  cublasLtMatmulPreference_t pref;
  PS_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  std::size_t ws = kWorkspaceBytes;
  PS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  PS_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.d, p.d, pref, 1, &result,
                                           &found));
  cublasLtMatmulPreferenceDestroy(pref);
  if (found == 0) throw device_error("cuBLASLt has no algorithm for this product");
  p.algo = result.algo;
  return plans_.emplace(key, p).first->second;
}

void Gemm::run(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
               int64_t lda, const void* b, int64_t ldb, void* d, int64_t ldd, Out out, float alpha,
               float beta, cudaStream_t stream, const void* bias) {
  const Plan& p =
      plan({trans_a, trans_b, m, n, k, lda, ldb, ldd, static_cast<int>(out), bias != nullptr});
  if (bias != nullptr) {  // the plan's algorithm holds for any bias; the pointer is per call
    PS_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                             sizeof bias));
  }
  PS_CUBLAS(cublasLtMatmul(handle_, p.desc, &alpha, a, p.a, b, p.b, &beta, d, p.d, d, p.d, &p.algo,
                           workspace_, kWorkspaceBytes, stream));
}

}  // namespace powershape::kernels
