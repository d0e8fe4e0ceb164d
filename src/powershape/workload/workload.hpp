#pragma once
// What a workload is, in its own terms. Everything that runs a workload starts here: its steps
// (steps.hpp) list the kernels the GPU runs, and the simulator's plan is derived from them
// (builders.hpp).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace powershape::workload {

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
};

// The LM head's three products alone (logits, dW, dX), a chunk at a time as the op runs them,
// without the pass and the scaling kernels: at one chunk the ceiling the op is measured against;
// at more, what chunking costs the products (or gains them: a smaller chunk's draw less).
struct LmHeadProducts {
  int64_t tokens = 0, width = 0, vocab = 0;
  double dw_bytes = 2;
};

// The shapes a workload takes when none is given (N, D, V: Qwen2-0.5B's LM head at 16 x 1024
// tokens; msm: ROWS, D, COLS).
inline constexpr std::array<int64_t, 3> kDefaultLmHeadShape = {16384, 896, 151936};
inline constexpr std::array<int64_t, 3> kDefaultMsmShape = {65536, 512, 65536};

// The logits a tile of the exponent-in-the-product kernel covers along V (kernels/logits_exp.cuh);
// each tile leaves a row's (offset, sum) pair.
inline constexpr int64_t kLmHeadExpTile = 256;
inline constexpr int64_t lmhead_exp_tiles(int64_t vocab) {
  return (vocab + kLmHeadExpTile - 1) / kLmHeadExpTile;
}

// The LM head's logits rows in memory: V rounded up to 8 elements, so each row starts on 16
// bytes (the products' and the pass's vector loads).
inline constexpr int64_t lmhead_row_stride(int64_t vocab) { return (vocab + 7) / 8 * 8; }

// The chunking paper's minimal reproduction: S = Q K^T (rows x width x cols), softmax over S,
// O = P V.
struct Msm {
  int64_t rows = 0, width = 0, cols = 0;
};

// A square wave: a compute burst of `duty` x the period, then a gap of the rest.
enum class Gap { kIdle, kMemory };
struct Square {
  double period_ms = 0, duty = 0;
  Gap gap = Gap::kIdle;
};

// size x size x size bf16 products back to back (the load profiles are calibrated with).
struct Products {
  int64_t size = 0;
};

// A plan read from a file or a recorded kernel timeline: only the simulator runs it.
struct Custom {};

struct Workload {
  std::variant<Custom, LmHead, LmHeadProducts, Msm, Square, Products> kind;
  int chunks = 1;  // row chunks (LM head tokens, msm rows); the last chunk is ragged
};

// "lmhead 16384x896x151936 chunks=4" (forward and backward; "lmhead forward ..." the forward
// pass alone, "lmhead products ..." the products alone), as plans and tables name it.
std::string name_of(const Workload& w);
// The name without its chunk count: what a workload is, whatever it is chunked into ("lmhead
// forward 4096x896x151936 dw=bf16").
std::string kind_name_of(const Workload& w);
// The workload a name_of names: "lmhead [forward|products] 131072x896x151936 chunks=8 [dw=bf16]"
// (without dw=bf16: an fp32 dW) or "msm 65536x512x65536 chunks=4"; nullopt for any other name.
std::optional<Workload> workload_named(const std::string& name);

}  // namespace powershape::workload
