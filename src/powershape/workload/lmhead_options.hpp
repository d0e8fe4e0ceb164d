#pragma once
// The LM head op's options: one definition, read by the op (kernels/lmhead.hpp), its steps
// (steps.hpp), the plans and the C API, which converts to and from it (defaults included).
#include <cstdint>
#include <string>

namespace powershape::workload {

enum class Reduction { kMean, kSum, kNone };

struct LmHeadOptions {
  // Token chunks; the last may be ragged. 0: tokens_per_chunk says, or when it is 0 too, the
  // default count (lmhead_default_chunks: about half a GiB of logits).
  int chunks = 0;
  int64_t tokens_per_chunk = 0;
  int64_t ignore_index = -100;
  Reduction reduction = Reduction::kMean;
  float label_smoothing = 0;
  float z_loss = 0;      // coefficient of lse^2 in each token's loss
  float softcap = 0;     // > 0: logits -> softcap * tanh(logits / softcap)
  float grad_scale = 1;  // the incoming gradient of the reduced loss (kNone: of the sum)
  bool backward = true;  // false: the loss alone
  // dW in fp32; by default bf16, the gradient's own dtype, accumulated across chunks in it (as
  // llmq and Liger-Kernel accumulate it): half the bytes each chunk after the first reads and
  // writes.
  bool dw_fp32 = false;
  // dW (and dbias) added into what their buffers hold, from the first chunk on: a caller that
  // accumulates gradients over micro-steps pays no pass of its own to add them.
  bool accumulate = false;
  // On an sm_90 GPU, without label smoothing, the softmax's exponent taken in the logits
  // product's epilogue (kernels/logits_exp.cuh) instead of a pass of its own over the logits;
  // false: that pass, as on every other GPU.
  bool fuse_exp = true;
};

// The most chunks a workload or the op takes (a chunk of fewer than one token is no chunk).
inline constexpr int kMaxChunks = 65536;

// What is wrong with the options, naming the option and its range ("label_smoothing must be in
// [0, 1), not 2"); empty when nothing is. The op, the C API and through it Python check with this.
std::string lmhead_options_problem(const LmHeadOptions& o);

}  // namespace powershape::workload
