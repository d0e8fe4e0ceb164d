#pragma once
// The LM head + cross-entropy, forward and backward, chunked over tokens, on the caller's CUDA
// stream. Callers need no CUDA headers: the stream is a CUstream_st*, pointers are device memory.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "powershape/workload/lmhead_steps.hpp"

struct CUstream_st;

namespace powershape::kernels {

// The options are the workload module's (one definition, which plans and the C API read too).
using workload::LmHeadOptions;
using workload::LmHeadStep;
using workload::Reduction;

// Device pointers. x [N x D] bf16, w [V x D] bf16, targets [N] int32 or int64; bias [V] bf16 added
// to the logits (may be null; 16-byte aligned); token_grad [N] fp32, each token's gradient times
// it (may be null; with kNone: the incoming gradient of each token's loss). Outputs: loss and
// z_loss (fp32 scalars; z_loss may be null), token_loss and lse ([N] fp32, may be null), dx
// [N x D] bf16, dw [V x D] fp32 or bf16, dbias [V] fp32 (null: not wanted), all overwritten (dw
// and dbias added to with `accumulate`).
struct LmHeadArgs {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* targets = nullptr;
  bool targets_int64 = false;
  int64_t n = 0, d = 0, v = 0;
  float* loss = nullptr;
  float* z_loss = nullptr;
  float* token_loss = nullptr;
  float* lse = nullptr;
  void* dx = nullptr;
  void* dw = nullptr;
  const void* bias = nullptr;
  float* dbias = nullptr;
  const float* token_grad = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

class LmHead {
 public:
  LmHead();
  ~LmHead();
  LmHead(const LmHead&) = delete;
  LmHead& operator=(const LmHead&) = delete;
  // Bytes of workspace run() needs: one chunk of logits (rows padded to 8 elements), per-token
  // scratch, and the product library's workspace.
  static std::size_t workspace_bytes(int64_t n, int64_t d, int64_t v, const LmHeadOptions& o);
  // Throws std::invalid_argument naming what is wrong with a shape or option (D must be a
  // multiple of 8; V may be anything), std::runtime_error on a CUDA or cuBLAS failure.
  // after_step, when set, is called once each step's kernels are on the stream (a profiler records
  // an event there: probe --record times each kernel so).
  void run(const LmHeadArgs& a, const LmHeadOptions& o, CUstream_st* stream,
           const std::function<void(const LmHeadStep&)>& after_step = {});
  // One op per CUDA device and calling thread, made on first use: its product plans are cached,
  // so callers that do not keep an LmHead (the C API, the Python package) reuse them.
  static LmHead& for_current_device();
  // Whether run() takes the softmax's exponent in the logits product on the current device for
  // these options (fuse_exp, no label smoothing, an sm_90 GPU and a build for sm_90a).
  static bool exp_in_product(const LmHeadOptions& o);
  // dx, dw and dbias (those not null) times *factor (fp32, on the device), read by the kernel: no
  // host synchronisation, and no pass over the data when it is 1 (a loss's usual gradient).
  static void scale_gradients(const LmHeadArgs& a, const LmHeadOptions& o, const float* factor,
                              CUstream_st* stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace powershape::kernels
