#pragma once
// A fine-tuning step of a decoder-only transformer as a plan of phases: each layer's products
// (attention projections, attention itself, the gated MLP) forward and backward, the element-wise
// kernels between them, the LM head and its loss, the optimizer, and the host's gap between
// steps. Full fine-tuning computes weight gradients and runs AdamW over every weight; LoRA
// computes input gradients only and updates its adapters. The workload family the advisor's
// selector is trained on and the Jetson study's kind of workload (small models fine-tuned on a
// board).
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/workload/plan.hpp"

namespace powershape::workload {

// A model's shape, as its Hugging Face config states it.
struct TransformerShape {
  std::string name;
  int64_t hidden = 0, layers = 0, ffn = 0, vocab = 0;
  bool gated_mlp = true;  // SwiGLU's three matrices; GELU's two
};
// Public configs: qwen2-0.5b, qwen2-1.5b, tinyllama-1.1b, llama-3.2-1b, phi-2, gemma-2b.
const std::vector<TransformerShape>& known_transformers();

struct Finetune {
  TransformerShape model;
  int64_t tokens = 2048;   // per step (micro-batch x sequence)
  int64_t seq = 512;       // sequence length (attention's span)
  int64_t lora_rank = 0;   // 0: full fine-tuning
  double host_gap_ms = 2;  // data loading and the Python between steps
  // The LM head and its loss a chunk of tokens / lm_head_chunks rows at a time, as the chunking
  // paper's trainer runs them (llmq's LMHeadChunks: logits, loss, dX and dW a chunk, dW
  // accumulated); 1: in one piece.
  int64_t lm_head_chunks = 1;
};

// "finetune:MODEL" or "finetune:MODEL:lora" with --shape TOKENS,SEQ,RANK (default 2048,512,16;
// the rank only with lora). Throws std::runtime_error naming what is wrong (an unknown model
// lists the known ones).
Finetune parse_finetune(const std::string& workload, const std::string& shape);
// Throws std::invalid_argument on sizes that are not positive, a sequence longer than the step or
// more LM head chunks than tokens.
Plan finetune_plan(const Finetune& f);

}  // namespace powershape::workload
