#pragma once
// Causal self-attention at long context, unfused, as PyTorch's math path runs it: for each block
// of queries, S = Q K^T over every head (the keys up to the block's last query), a masked softmax
// of S / sqrt(d), O = P V. At one chunk the products are SEQ x SEQ and the softmax holds every
// head's SEQ^2 scores (the masked half computed and thrown away); a chunk of r queries from row0
// takes the keys [0, row0 + r) alone, so chunking saves both memory and masked work. What users
// run instead is FlashAttention, fused, with no S in memory (bench/attention_peers.py measures
// both).
#include "powershape/workload/kind.hpp"

namespace powershape::workload {

struct Attention {
  int64_t seq = 0, heads = 0, head_dim = 0;

  static constexpr const char* kName = "attention";
  static constexpr const char* kShape = "SEQ,HEADS,HEAD_DIM";
  static constexpr std::array<int64_t, 3> kDefaultShape = {32768, 32, 128};  // Llama-3-8B's heads
  static constexpr bool kChunked = true;
  enum Kernel { kQk, kSoftmax, kPv };

  static std::optional<Attention> from_args(const WorkloadArgs& a, const Sizes& s);
  static std::optional<Attention> from_name(const NameParts& p);
  static std::vector<Attention> examples();
  std::string name(int chunks) const;
  void check(int chunks) const;
  // A chunk's three steps, each over every head (its batch): a product a head, m x n x k each; the
  // phase is the heads' sum, its m their rows stacked.
  void steps(int chunks, const Rates& r, const StepFn& f) const;
};

// What it computes, in double (the GPU tests hold its kernels to it at any chunk count): Q, K, V
// [seq x heads x d] (tokens first); returns O in the same layout: for each head and query t, the
// softmax over keys 0..t of q_t . k_s / sqrt(d), times V. Throws invalid_input for sizes that do
// not match.
std::vector<double> causal_attention(const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, int64_t seq, int64_t heads,
                                     int64_t d);

}  // namespace powershape::workload

namespace powershape::kernels {
std::unique_ptr<KindOnGpu> on_gpu(const workload::Attention& a, int chunks, GpuContext& gpu);
}  // namespace powershape::kernels
