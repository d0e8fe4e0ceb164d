/* Prints the C API's structures as the C compiler lays them out, one line a field ("STRUCT FIELD
 * OFFSET") and one a structure ("STRUCT sizeof SIZE"): python/tests/test_layout.py holds the
 * Python package's ctypes structures to these. */
#include <stddef.h>
#include <stdio.h>

#include "powershape/powershape.h"

#define FIELD(s, f) printf("%s %s %zu\n", #s, #f, offsetof(s, f))
#define SIZE(s) printf("%s sizeof %zu\n", #s, sizeof(s))

int main(void) {
  FIELD(ps_summary, gpu);
  FIELD(ps_summary, seconds);
  FIELD(ps_summary, energy_j);
  FIELD(ps_summary, energy_method);
  FIELD(ps_summary, energy_counter_updates);
  FIELD(ps_summary, avg_power_w);
  FIELD(ps_summary, peak_power_w);
  FIELD(ps_summary, sm_clock_mean_mhz);
  FIELD(ps_summary, sm_clock_p5_mhz);
  FIELD(ps_summary, sm_clock_p50_mhz);
  FIELD(ps_summary, sm_clock_p95_mhz);
  FIELD(ps_summary, power_capped);
  FIELD(ps_summary, thermal_throttled);
  FIELD(ps_summary, peak_temp_c);
  SIZE(ps_summary);
  FIELD(ps_lmhead_options, chunks);
  FIELD(ps_lmhead_options, tokens_per_chunk);
  FIELD(ps_lmhead_options, ignore_index);
  FIELD(ps_lmhead_options, reduction);
  FIELD(ps_lmhead_options, label_smoothing);
  FIELD(ps_lmhead_options, z_loss);
  FIELD(ps_lmhead_options, softcap);
  FIELD(ps_lmhead_options, grad_scale);
  FIELD(ps_lmhead_options, backward);
  FIELD(ps_lmhead_options, dw_fp32);
  FIELD(ps_lmhead_options, accumulate);
  FIELD(ps_lmhead_options, fuse_exp);
  SIZE(ps_lmhead_options);
  FIELD(ps_lmhead_args, x);
  FIELD(ps_lmhead_args, w);
  FIELD(ps_lmhead_args, targets);
  FIELD(ps_lmhead_args, targets_int64);
  FIELD(ps_lmhead_args, n);
  FIELD(ps_lmhead_args, d);
  FIELD(ps_lmhead_args, v);
  FIELD(ps_lmhead_args, loss);
  FIELD(ps_lmhead_args, z_loss);
  FIELD(ps_lmhead_args, token_loss);
  FIELD(ps_lmhead_args, lse);
  FIELD(ps_lmhead_args, dx);
  FIELD(ps_lmhead_args, dw);
  FIELD(ps_lmhead_args, workspace);
  FIELD(ps_lmhead_args, workspace_bytes);
  FIELD(ps_lmhead_args, bias);
  FIELD(ps_lmhead_args, dbias);
  FIELD(ps_lmhead_args, token_grad);
  SIZE(ps_lmhead_args);
  return 0;
}
