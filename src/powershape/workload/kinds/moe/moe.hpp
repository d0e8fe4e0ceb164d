#pragma once
// A mixture-of-experts layer's routing and experts, as Mixtral and Qwen2-MoE run them, a chunk of
// tokens at a time: the router's product (logits over the experts), its softmax and top-k with the
// dispatch of each token to its experts' slots, the gather of those tokens' rows, each expert's
// gate-and-up product, SwiGLU, its down product, and the weighted combine of each token's experts.
// Capacity-based dispatch (GShard, Switch; Megatron's capacity factor 1): each expert takes at most
// ceil(tokens x top-k / experts) of a chunk's tokens, in token order, and drops the rest, so each
// expert's products have one shape. Dropless routers (Mixtral in transformers, MegaBlocks) move the
// same rows in all, unevenly.
#include "powershape/workload/kind.hpp"

namespace powershape::workload {

struct Moe {
  int64_t tokens = 0, width = 0, experts = 0, top_k = 0, ffn = 0;

  static constexpr const char* kName = "moe";
  static constexpr const char* kShape = "TOKENS,D,EXPERTS,TOP_K,FFN";
  // Mixtral 8x7B's layer at 16 x 1024 tokens.
  static constexpr std::array<int64_t, 5> kDefaultShape = {16384, 4096, 8, 2, 14336};
  static constexpr bool kChunked = true;
  enum Kernel { kRouter, kRoute, kGather, kUp, kSwiglu, kDown, kCombine };

  static std::optional<Moe> from_args(const WorkloadArgs& a, const Sizes& s);
  static std::optional<Moe> from_name(const NameParts& p);
  static std::vector<Moe> examples();
  std::string name(int chunks) const;
  void check(int chunks) const;
  // Each expert's tokens in a chunk of `rows`: its capacity.
  int64_t capacity(int64_t rows) const { return (rows * top_k + experts - 1) / experts; }
  void steps(int chunks, const Rates& r, const StepFn& f) const;
};

// What a Moe layer computes, in double (the GPU tests hold its kernels to it). x [tokens x D],
// router [E x D], w1 [E x 2F x D] (each expert's gate rows, then its up rows), w2 [E x D x F];
// `chunks` as the workload's (capacity is a chunk's). For each token, the softmax of its top-k
// router logits (ties to the lower expert) weighs its experts' outputs,
// w2_e (silu(gate_e . x) * (up_e . x)); an expert past its capacity drops the token. Throws
// invalid_input for sizes that do not match.
std::vector<double> moe_layer(const Moe& m, int chunks, const std::vector<float>& x,
                              const std::vector<float>& router, const std::vector<float>& w1,
                              const std::vector<float>& w2);

}  // namespace powershape::workload

namespace powershape::kernels {
std::unique_ptr<KindOnGpu> on_gpu(const workload::Moe& m, int chunks, GpuContext& gpu);
}  // namespace powershape::kernels
