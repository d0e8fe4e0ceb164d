#pragma once
#include <cstdint>
#include <vector>

namespace powershape::reference {

enum class Reduction { kMean, kSum, kNone };

// What the LM head + cross-entropy computes, with every option the CUDA op has.
struct LmHeadOptions {
  int64_t ignore_index = -100;
  Reduction reduction = Reduction::kMean;
  double label_smoothing = 0;      // eps: target distribution (1 - eps) one-hot + eps / V uniform
  double z_loss = 0;               // coefficient of lse^2, added to each token's loss
  double softcap = 0;              // > 0: logits become softcap * tanh(logits / softcap)
  double grad_scale = 1;           // the incoming gradient of the (reduced) loss
  std::vector<double> bias;        // [V] added to the logits (before the soft-cap); empty: none
  std::vector<double> token_grad;  // [N] each token's gradient times this (kNone: the incoming
                                   // gradient of each token's loss); empty: all 1
};

struct LmHeadResult {
  double loss = 0;                 // reduced as asked (kNone: the sum, for reference)
  double z_loss = 0;               // the z-loss part of `loss`, reduced the same way
  std::vector<double> token_loss;  // [N], 0 for ignored tokens
  std::vector<double> lse;         // [N] log-sum-exp of the (capped) logits
  std::vector<double> dx;          // [N x D]
  std::vector<double> dw;          // [V x D]
  std::vector<double> dbias;       // [V] when a bias was given
};

// fp64 on the CPU. x: [N x D], w: [V x D], row-major; targets in [0, V) or ignore_index. With
// reduction kNone the gradient is that of the sum of token losses times grad_scale.
LmHeadResult lmhead_reference(const std::vector<double>& x, const std::vector<double>& w,
                              const std::vector<int64_t>& targets, int64_t n, int64_t d, int64_t v,
                              const LmHeadOptions& o);

}  // namespace powershape::reference
