#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "powershape/kernels/cuda_check.hpp"
#include "powershape/kernels/gemm.hpp"
#include "powershape/util/error.hpp"

namespace powershape::kernels {
namespace {

// POWERSHAPE_GEMM_AUTOTUNE=0: cuBLASLt's first heuristic, as PyTorch takes it (the same algorithm
// on every run of a shape).
bool autotune_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("POWERSHAPE_GEMM_AUTOTUNE");
    return v == nullptr || std::string(v) != "0";
  }();
  return on;
}

// The algorithm each shape's timing chose, per device, for every Gemm of the process: an
// experiment's workloads are rebuilt between measurements and must not time again each time.
std::mutex chosen_mu;
std::map<std::pair<int, GemmKey>, cublasLtMatmulAlgo_t> chosen;

std::pair<int, GemmKey> chosen_key(const GemmKey& k) {
  int device = 0;
  PS_CUDA(cudaGetDevice(&device));
  return {device, k};
}

}  // namespace

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

Gemm::Plan& Gemm::plan(const Key& key) {
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  auto [ta, tb, m, n, k, lda, ldb, ldd, out, bias, count, sa, sb, sd, align] = key;
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
  if (count > 1) {
    const auto batched = [](cublasLtMatrixLayout_t l, int64_t c, int64_t stride) {
      const auto n32 = static_cast<int32_t>(c);
      PS_CUBLAS(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &n32,
                                                 sizeof n32));
      PS_CUBLAS(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                 &stride, sizeof stride));
    };
    batched(p.a, count, sa);
    batched(p.b, count, sb);
    batched(p.d, count, sd);
  }
  cublasLtMatmulPreference_t pref;
  PS_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  std::size_t ws = kWorkspaceBytes;
  PS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &ws, sizeof ws));
  const auto align32 = static_cast<uint32_t>(align);
  for (auto attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    PS_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, attr, &align32, sizeof align32));
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int found = 0;
  PS_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle_, p.desc, p.a, p.b, p.d, p.d, pref, kCandidates,
                                           results, &found));
  cublasLtMatmulPreferenceDestroy(pref);
  if (found == 0) throw device_error("cuBLASLt has no algorithm for this product");
  for (int i = 0; i < found; ++i) p.candidates.push_back(results[i].algo);
  p.algo = p.candidates.front();
  p.tuned = found == 1 || !autotune_enabled();
  if (!p.tuned) {
    std::lock_guard lock(chosen_mu);
    auto it = chosen.find(chosen_key(key));
    if (it != chosen.end()) p.algo = it->second, p.tuned = true;
  }
  return plans_.emplace(key, std::move(p)).first->second;
}

void Gemm::tune(const Key& key, Plan& p, const void* a, const void* b, void* d, float alpha,
                cudaStream_t stream, const void* bias) {
  p.tuned = true;
  const float zero = 0;
  auto launch = [&](const cublasLtMatmulAlgo_t& algo) {
    return cublasLtMatmul(handle_, p.desc, &alpha, a, p.a, b, p.b, &zero, d, p.d, d, p.d, &algo,
                          workspace_, kWorkspaceBytes, stream);
  };
  if (bias != nullptr) {
    PS_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                             sizeof bias));
  }
  std::vector<cublasLtMatmulAlgo_t> usable;
  for (const auto& algo : p.candidates) {
    if (launch(algo) == CUBLAS_STATUS_SUCCESS) {  // one untimed launch
      usable.push_back(algo);
    } else {
      PS_CUDA(cudaGetLastError());  // a refused candidate leaves no error for the next kernel
    }
  }
  auto keep = [&](const cublasLtMatmulAlgo_t& algo) {
    p.algo = algo;
    std::lock_guard lock(chosen_mu);
    chosen[chosen_key(key)] = algo;
  };
  if (usable.empty()) return;  // the first heuristic's own error comes with the product
  if (usable.size() == 1) return keep(usable.front());
  // The events go with this scope, whatever throws.
  struct Marks {
    std::vector<cudaEvent_t> e;
    ~Marks() {
      for (cudaEvent_t x : e) cudaEventDestroy(x);
    }
  } marks;
  const std::size_t n_marks = kTimedRounds * usable.size() + 1;
  for (std::size_t i = 0; i < n_marks; ++i) {
    cudaEvent_t x;
    PS_CUDA(cudaEventCreate(&x));
    marks.e.push_back(x);
  }
  PS_CUDA(cudaEventRecord(marks.e[0], stream));
  for (int r = 0; r < kTimedRounds; ++r) {
    for (std::size_t c = 0; c < usable.size(); ++c) {
      PS_CUBLAS(launch(usable[c]));
      PS_CUDA(cudaEventRecord(marks.e[r * usable.size() + c + 1], stream));
    }
  }
  PS_CUDA(cudaEventSynchronize(marks.e[n_marks - 1]));
  std::vector<std::vector<float>> ms(usable.size());
  for (int r = 0; r < kTimedRounds; ++r) {
    for (std::size_t c = 0; c < usable.size(); ++c) {
      const std::size_t at = r * usable.size() + c;
      float t = 0;
      PS_CUDA(cudaEventElapsedTime(&t, marks.e[at], marks.e[at + 1]));
      ms[c].push_back(t);
    }
  }
  std::size_t best = 0;
  float best_ms = 0;
  for (std::size_t c = 0; c < usable.size(); ++c) {
    std::sort(ms[c].begin(), ms[c].end());
    const float median = ms[c][ms[c].size() / 2];
    if (c == 0 || median < best_ms) best = c, best_ms = median;
  }
  keep(usable[best]);
}

namespace {
thread_local GemmLaunches* recording = nullptr;
}  // namespace

GemmLaunches::GemmLaunches() : outer_(recording) { recording = this; }
GemmLaunches::~GemmLaunches() { recording = outer_; }

namespace {

// The largest power of two, up to 256, that every address divides: of the operands, and of each
// batch's step from one product to the next.
int alignment_of(std::initializer_list<uintptr_t> addresses) {
  uintptr_t all = 256;
  for (uintptr_t a : addresses) all |= a;
  return static_cast<int>(all & (~all + 1));
}

}  // namespace

void Gemm::run(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
               int64_t lda, const void* b, int64_t ldb, void* d, int64_t ldd, Out out, float alpha,
               float beta, cudaStream_t stream, const void* bias) {
  if (recording != nullptr) recording->launches_.push_back({trans_a, trans_b, m, n, k, 1});
  // cuBLASLt's default alignment (256 bytes), as before the batched path: one plan for every chunk
  // of a shape whatever its offset, so that a product accumulated into (beta 1, never timed) runs
  // the algorithm its first chunk chose.
  launch({trans_a, trans_b, m, n, k, lda, ldb, ldd, static_cast<int>(out), bias != nullptr, 1, 0, 0,
          0, 256},
         a, b, d, alpha, beta, stream, bias);
}

void Gemm::run_batched(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const void* a,
                       int64_t lda, const void* b, int64_t ldb, void* d, int64_t ldd, Out out,
                       const GemmBatch& batch, cudaStream_t stream) {
  if (batch.count < 1 || batch.count > INT32_MAX)
    throw invalid_input("a batch of products counts from 1 to 2^31 - 1");
  if (recording != nullptr)
    recording->launches_.push_back({trans_a, trans_b, m, n, k, batch.count});
  // A batch's members start at offsets the base pointers' alignment need not hold (a head's
  // columns, 128 bytes in): cuBLASLt is asked for algorithms that need no more than they keep.
  const uintptr_t out_bytes = out == Out::kFp32 ? 4 : 2, many = batch.count > 1 ? 1 : 0;
  const int align = alignment_of({reinterpret_cast<uintptr_t>(a), reinterpret_cast<uintptr_t>(b),
                                  reinterpret_cast<uintptr_t>(d),
                                  many * static_cast<uintptr_t>(batch.stride_a) * 2,
                                  many * static_cast<uintptr_t>(batch.stride_b) * 2,
                                  many * static_cast<uintptr_t>(batch.stride_d) * out_bytes});
  launch({trans_a, trans_b, m, n, k, lda, ldb, ldd, static_cast<int>(out), false, batch.count,
          batch.stride_a, batch.stride_b, batch.stride_d, align},
         a, b, d, 1, 0, stream, nullptr);
}

void Gemm::launch(const Key& key, const void* a, const void* b, void* d, float alpha, float beta,
                  cudaStream_t stream, const void* bias) {
  Plan& p = plan(key);
  if (!p.tuned && beta == 0) {  // D is overwritten: the candidates may write into it first
    // Not while this stream is being captured (the timing synchronises); while another one is, in
    // the relaxed mode, so that a global-mode capture elsewhere does not forbid the timing's calls.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    PS_CUDA(cudaStreamIsCapturing(stream, &capture));
    if (capture == cudaStreamCaptureStatusNone) {
      cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
      PS_CUDA(cudaThreadExchangeStreamCaptureMode(&mode));
      struct Restore {
        cudaStreamCaptureMode m;
        ~Restore() { cudaThreadExchangeStreamCaptureMode(&m); }
      } restore{mode};
      tune(key, p, a, b, d, alpha, stream, bias);
    }
  }
  if (bias != nullptr) {  // the plan's algorithm holds for any bias; the pointer is per call
    PS_CUBLAS(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                             sizeof bias));
  }
  PS_CUBLAS(cublasLtMatmul(handle_, p.desc, &alpha, a, p.a, b, p.b, &beta, d, p.d, d, p.d, &p.algo,
                           workspace_, kWorkspaceBytes, stream));
}

}  // namespace powershape::kernels
