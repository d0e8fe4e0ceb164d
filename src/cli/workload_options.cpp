#include "workload_options.hpp"

#include "validators.hpp"

namespace powershape::cli {

void add_workload_options(CLI::App& cmd, workload::WorkloadArgs& a, WorkloadUse use) {
  if (use != WorkloadUse::kCompare) {
    cmd.add_option("--duty", a.duty, "square: compute fraction of a period (default 0.5)")
        ->check(finite_in(0.001, 0.999));
  }
  if (use == WorkloadUse::kProbe) return;
  if (use == WorkloadUse::kCompare) {  // the caller's defaults
    cmd.add_option("--workload", a.workload,
                   workload::kind_list(true) + " (default " + a.workload +
                       "), or on a simulated device finetune:MODEL[:lora] (a training step whose "
                       "LM head is chunked)");
    cmd.add_option("--chunks", a.chunks,
                   "Chunk counts to compare, the first the baseline (default " + a.chunks + ")");
  } else {
    cmd.add_option("--workload", a.workload,
                   workload::kind_list(false) +
                       ", finetune:MODEL[:lora], PLAN.json or a kernel TIMELINE.csv (default "
                       "lmhead)");
    cmd.add_option("--chunks", a.chunks, "Row chunks (default 1)");
    cmd.add_option("--period-ms", a.period_ms, "square: period in ms (default 50)")
        ->check(finite_in(0.1, 3.6e6));
    cmd.add_option("--gap", a.gap, "square: idle or memory (default idle)")
        ->check(CLI::IsMember({"idle", "memory"}));
    cmd.add_option(
        "--recorded-on", a.recorded_on,
        "TIMELINE.csv: the profile of the GPU it was recorded on (default the simulated one)");
  }
  cmd.add_option(
      "--shape", a.shape,
      workload::kind_shapes() + "; finetune: TOKENS,SEQ,LORA_RANK (default 2048,512,16)");
  cmd.add_flag("--forward-only", a.forward_only, "lmhead: the forward pass alone");
  cmd.add_flag("--products-only", a.products_only,
               "lmhead: its three products alone, chunked as the op chunks them (no pass): "
               "whether the chunk effect is in the products or in the alternation");
  cmd.add_flag("--exp-in-product", a.exp_in_product,
               "lmhead: the softmax's exponent in the logits product, as the op takes it on an "
               "sm_90 GPU (H100, H200) by default; without it, a pass of its own");
  cmd.add_option("--ce-bytes", a.ce_bytes_per_logit,
                 "lmhead: bytes the cross-entropy pass moves per logit (4: fused bf16 in place, "
                 "the default; 16 or more: an unfused fp32 path; with --forward-only, half: no "
                 "gradient is written)")
      ->check(finite_in(0.5, 1024));
}

}  // namespace powershape::cli
