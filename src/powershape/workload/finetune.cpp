#include "powershape/workload/finetune.hpp"

#include <stdexcept>

#include "powershape/util/error.hpp"
#include "powershape/workload/args.hpp"
#include "powershape/workload/builders.hpp"

namespace powershape::workload {

const std::vector<TransformerShape>& known_transformers() {
  static const std::vector<TransformerShape> k = {{"qwen2-0.5b", 896, 24, 4864, 151936, true},
                                                  {"qwen2-1.5b", 1536, 28, 8960, 151936, true},
                                                  {"tinyllama-1.1b", 2048, 22, 5632, 32000, true},
                                                  {"llama-3.2-1b", 2048, 16, 8192, 128256, true},
                                                  {"phi-2", 2560, 32, 10240, 51200, false},
                                                  {"gemma-2b", 2048, 18, 16384, 256000, true}};
  return k;
}

Finetune parse_finetune(const std::string& workload, const std::string& shape) {
  const std::string prefix = "finetune:";
  if (workload.rfind(prefix, 0) != 0)
    throw invalid_input("workload", "expected finetune:MODEL[:lora]");
  std::string name = workload.substr(prefix.size());
  bool lora = false;
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ":lora") == 0) {
    lora = true;
    name.resize(name.size() - 5);
  }
  Finetune f;
  std::string names;
  for (const auto& m : known_transformers()) {
    if (m.name == name) f.model = m;
    names += (names.empty() ? "" : ", ") + m.name;
  }
  if (f.model.name.empty())
    throw invalid_input("workload", "no model '" + name + "' to fine-tune (" + names + ")");
  const auto s = parse_shape(shape.empty() ? "2048,512,16" : shape);
  f.tokens = s[0];
  f.seq = s[1];
  f.lora_rank = lora ? s[2] : 0;
  if (f.seq > f.tokens)
    throw invalid_input("shape", "the sequence (" + std::to_string(f.seq) +
                                     ") is longer than the step's tokens (" +
                                     std::to_string(f.tokens) + ")");
  return f;
}

Plan finetune_plan(const Finetune& f) {
  const TransformerShape& m = f.model;
  if (!(m.hidden > 0 && m.layers > 0 && m.ffn > 0 && m.vocab > 0 && f.tokens > 0 && f.seq > 0 &&
        f.lora_rank >= 0 && f.host_gap_ms >= 0 && f.lm_head_chunks >= 1))
    throw invalid_input("finetune: sizes must be positive");
  if (f.lm_head_chunks > f.tokens)
    throw invalid_input("finetune: more LM head chunks (" + std::to_string(f.lm_head_chunks) +
                        ") than tokens (" + std::to_string(f.tokens) + ")");
  if (f.seq > f.tokens) throw invalid_input("finetune: the sequence exceeds the step");
  const double t = static_cast<double>(f.tokens), d = static_cast<double>(m.hidden),
               ffn = static_cast<double>(m.ffn), s = static_cast<double>(f.seq),
               r = static_cast<double>(f.lora_rank);
  const bool full = f.lora_rank == 0;
  const double mlp_mats = m.gated_mlp ? 3 : 2;
  Plan plan;
  plan.name = "finetune " + m.name + (full ? " full" : " lora r" + std::to_string(f.lora_rank)) +
              " " + std::to_string(f.tokens) + "x" + std::to_string(f.seq) +
              (f.lm_head_chunks > 1 ? " lm_head_chunks=" + std::to_string(f.lm_head_chunks) : "");
  plan.workload = {Custom{}};
  // Element-wise traffic a layer moves forward (norms, rotary, residuals, the activation): ~12
  // passes over a bf16 activation of width d and 4 of width ffn; backward twice that.
  const double elementwise = t * (12 * d + 4 * ffn) * 2;
  for (int64_t l = 0; l < m.layers; ++l) {
    plan.phases.push_back(product("qkv_o", t, 4 * d, d));
    // Causal attention over sequences of s: QK^T and PV, half of each computed.
    Phase attn = product("attention", t, s, d);
    attn.flops *= 2 * 0.5;
    plan.phases.push_back(attn);
    plan.phases.push_back(product("mlp", t, mlp_mats * ffn, d));
    plan.phases.push_back(stream("elementwise", elementwise));
  }
  // The LM head and its loss, forward and backward (the backward's dX always; dW in full), a
  // chunk of rows at a time: the last chunk takes what is left.
  const double v = static_cast<double>(m.vocab);
  for (int64_t c = 0; c < f.lm_head_chunks; ++c) {
    const int64_t rows =
        f.tokens / f.lm_head_chunks + (c == f.lm_head_chunks - 1 ? f.tokens % f.lm_head_chunks : 0);
    const double n = static_cast<double>(rows);
    plan.phases.push_back(product("lm_head", n, v, d));
    plan.phases.push_back(stream("cross_entropy", 4 * n * v));
    plan.phases.push_back(product("lm_head_dx", n, d, v));
    if (full) plan.phases.push_back(product("lm_head_dw", v, d, n, 4, true));
  }
  for (int64_t l = 0; l < m.layers; ++l) {
    plan.phases.push_back(stream("elementwise_bwd", 2 * elementwise));
    plan.phases.push_back(product("mlp_dx", t, d, mlp_mats * ffn));
    if (full) plan.phases.push_back(product("mlp_dw", mlp_mats * ffn, d, t, 4, true));
    Phase attn = product("attention_bwd", t, s, d);
    attn.flops *= 4 * 0.5;  // dQ, dK, dV, dP
    plan.phases.push_back(attn);
    plan.phases.push_back(product("qkv_o_dx", t, d, 4 * d));
    if (full) plan.phases.push_back(product("qkv_o_dw", 4 * d, d, t, 4, true));
    // LoRA's adapters on the four projections and the MLP: rank-r products, tiny.
    if (!full) plan.phases.push_back(product("lora", t, r, (4 + mlp_mats) * d));
  }
  // AdamW: bf16 weights, fp32 master, gradients, two moments read and written (~24 bytes a
  // weight); LoRA's adapters only.
  const double weights = static_cast<double>(m.layers) * (4 * d * d + mlp_mats * ffn * d) +
                         static_cast<double>(m.vocab) * d;
  const double trained =
      full ? weights : static_cast<double>(m.layers) * r * ((4 + mlp_mats) * d + 4 * d + ffn);
  plan.phases.push_back(stream("optimizer", 24 * trained));
  if (f.host_gap_ms > 0) {
    Phase gap;
    gap.name = "host";
    gap.kind = PhaseKind::kIdle;
    gap.seconds = f.host_gap_ms * 1e-3;
    plan.phases.push_back(gap);
  }
  return plan;
}

}  // namespace powershape::workload
