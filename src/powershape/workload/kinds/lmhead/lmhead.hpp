#pragma once
// The LM head and its cross-entropy: the op itself (LmHead: its own kernels, lmhead_steps.hpp) or
// its three products alone (LmHeadProducts), both chunked over tokens; both are --workload lmhead
// (--products-only picks the second).
#include "powershape/workload/kind.hpp"
#include "powershape/workload/lmhead_options.hpp"

namespace powershape::workload {

struct LmHeadStep;

// The shape taken when none is given (N, D, V: Qwen2-0.5B's LM head at 16 x 1024 tokens).
inline constexpr std::array<int64_t, 3> kDefaultLmHeadShape = {16384, 896, 151936};

// LM head + cross-entropy: logits = X W^T over `tokens` x `width` x `vocab`, the fused
// softmax/cross-entropy pass, and with `backward` the dX and dW products.
struct LmHead {
  int64_t tokens = 0, width = 0, vocab = 0;
  bool backward = true;
  // Bytes the cross-entropy pass moves per logit: 4 for the fused one-read pass (bf16 logits read,
  // bf16 dlogits written in place); an unfused fp32 path moves 16 or more.
  double ce_bytes_per_logit = 4;
  // Bytes of each dW element: 2 (bf16, the gradient's dtype: the op's default) or 4 (fp32).
  double dw_bytes = 2;
  // The softmax's exponent in the logits product's epilogue (the op on an sm_90 GPU,
  // kernels/logits_exp.cuh): the product writes exp(z - c) (backward; nothing forward) and each
  // row's statistics per 256-logit tile, and a small pass over those replaces the one over the
  // logits.
  bool exp_in_product = false;
  // A bias whose gradient is asked for: the backward pass sums dlogits' columns a chunk (the
  // op's dbias kernel). Not on the command line; the C API and Python take a bias.
  bool bias = false;

  static constexpr const char* kName = "lmhead";
  static constexpr const char* kShape = "N,D,V";
  static constexpr std::array<int64_t, 3> kDefaultShape = kDefaultLmHeadShape;
  static constexpr bool kChunked = true;
  enum Kernel { kOp };  // one call of the op: its kernels are its own steps

  static std::optional<LmHead> from_args(const WorkloadArgs& a, const Sizes& s);
  static std::optional<LmHead> from_name(const NameParts& p);
  static std::vector<LmHead> examples();
  std::string name(int chunks) const;
  void check(int chunks) const;
  void steps(int chunks, const Rates& r, const StepFn& f) const;
};

// The LM head's three products alone (logits, dW, dX), a chunk at a time as the op runs them,
// without the pass and the scaling kernels: at one chunk the ceiling the op is measured against;
// at more, what chunking costs the products (or gains them: a smaller chunk's draw less).
struct LmHeadProducts {
  int64_t tokens = 0, width = 0, vocab = 0;
  double dw_bytes = 2;

  static constexpr const char* kName = "lmhead";
  static constexpr const char* kShape = "N,D,V";
  static constexpr std::array<int64_t, 3> kDefaultShape = kDefaultLmHeadShape;
  static constexpr bool kChunked = true;
  enum Kernel { kLogits, kDw, kDx };

  static std::optional<LmHeadProducts> from_args(const WorkloadArgs& a, const Sizes& s);
  static std::optional<LmHeadProducts> from_name(const NameParts& p);
  static std::vector<LmHeadProducts> examples();
  std::string name(int chunks) const;
  void check(int chunks) const;
  void steps(int chunks, const Rates& r, const StepFn& f) const;
};

// The logits a tile of the exponent-in-the-product kernel covers along V (kernels/logits_exp.cuh);
// each tile leaves a row's (offset, sum) pair.
inline constexpr int64_t kLmHeadExpTile = 256;
inline constexpr int64_t lmhead_exp_tiles(int64_t vocab) {
  return (vocab + kLmHeadExpTile - 1) / kLmHeadExpTile;
}

// The LM head's logits rows in memory: V rounded up to 8 elements, so each row starts on 16
// bytes (the products' and the pass's vector loads).
inline constexpr int64_t lmhead_row_stride(int64_t vocab) { return (vocab + 7) / 8 * 8; }

// The op's options for LM head workload `l` at `chunks`.
LmHeadOptions lmhead_options(const LmHead& l, int chunks);
// One of the op's kernels as a plan's phase.
Phase phase_of(const LmHeadStep& s, const LmHead& l);

}  // namespace powershape::workload

namespace powershape::kernels {
std::unique_ptr<KindOnGpu> on_gpu(const workload::LmHead& l, int chunks, GpuContext& gpu);
std::unique_ptr<KindOnGpu> on_gpu(const workload::LmHeadProducts& l, int chunks, GpuContext& gpu);
}  // namespace powershape::kernels
