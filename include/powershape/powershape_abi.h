/* The C API's structures, each one table of its fields, X(TYPE, NAME, KIND): powershape.h declares
 * the structures from these tables, and the library's conversions, its ps_abi_layout(),
 * tests/capi/layout.c and the Python package's ctypes structures are made from them, so a field
 * is added in one place. KIND is the field's type as ps_abi_layout() names it: i32 (int), i64
 * (int64_t), f32 (float), f64 (double), ptr (a pointer), size (size_t). */
#ifndef POWERSHAPE_POWERSHAPE_ABI_H
#define POWERSHAPE_POWERSHAPE_ABI_H

/* What one GPU did over a region. A figure the source cannot give is NaN. */
#define PS_SUMMARY_FIELDS(X)                                     \
  X(int, gpu, i32)                                               \
  X(double, seconds, f64)                                        \
  X(double, energy_j, f64)                                       \
  X(int, energy_method, i32) /* PS_ENERGY_* */                   \
  X(int, energy_counter_updates, i32)                            \
  X(double, avg_power_w, f64)                                    \
  X(double, peak_power_w, f64)                                   \
  X(double, sm_clock_mean_mhz, f64)                              \
  X(double, sm_clock_p5_mhz, f64)                                \
  X(double, sm_clock_p50_mhz, f64)                               \
  X(double, sm_clock_p95_mhz, f64)                               \
  X(double, power_capped, f64)      /* fraction of the region */ \
  X(double, thermal_throttled, f64) /* fraction of the region */ \
  X(double, peak_temp_c, f64)

/* The LM head's options. chunks: token chunks (the last ragged); 0: tokens_per_chunk says, else
 * the default. ignore_index: -100 by default. reduction: PS_REDUCTION_*. z_loss: the coefficient
 * of lse^2. softcap > 0: logits -> softcap * tanh(logits / softcap). grad_scale: the incoming
 * gradient of the reduced loss. backward 0: the loss alone. dw_fp32: dW in fp32 (1) or bf16, the
 * gradient's own dtype (0). accumulate 1: dW and dbias added into what their buffers hold.
 * fuse_exp 1: on an sm_90 GPU, the softmax's exponent in the logits product. */
#define PS_LMHEAD_OPTIONS_FIELDS(X) \
  X(int, chunks, i32)               \
  X(int64_t, tokens_per_chunk, i64) \
  X(int64_t, ignore_index, i64)     \
  X(int, reduction, i32)            \
  X(float, label_smoothing, f32)    \
  X(float, z_loss, f32)             \
  X(float, softcap, f32)            \
  X(float, grad_scale, f32)         \
  X(int, backward, i32)             \
  X(int, dw_fp32, i32)              \
  X(int, accumulate, i32)           \
  X(int, fuse_exp, i32)

/* Device pointers: x [N x D] bf16, w [V x D] bf16, targets [N] int32 or int64 (targets_int64);
 * loss and z_loss fp32 scalars, token_loss and lse [N] fp32 (those three may be NULL), dx [N x D]
 * bf16, dw [V x D] fp32 or bf16 (overwritten, or added to with accumulate). bias [V] bf16 (NULL:
 * none; 16-byte aligned) is added to the logits, dbias [V] fp32 receives its gradient (NULL: not
 * wanted); token_grad [N] fp32 (NULL: none) multiplies each token's gradient: with
 * PS_REDUCTION_NONE, the incoming gradient of each token's loss. */
#define PS_LMHEAD_ARGS_FIELDS(X)   \
  X(const void*, x, ptr)           \
  X(const void*, w, ptr)           \
  X(const void*, targets, ptr)     \
  X(int, targets_int64, i32)       \
  X(int64_t, n, i64)               \
  X(int64_t, d, i64)               \
  X(int64_t, v, i64)               \
  X(float*, loss, ptr)             \
  X(float*, z_loss, ptr)           \
  X(float*, token_loss, ptr)       \
  X(float*, lse, ptr)              \
  X(void*, dx, ptr)                \
  X(void*, dw, ptr)                \
  X(void*, workspace, ptr)         \
  X(size_t, workspace_bytes, size) \
  X(const void*, bias, ptr)        \
  X(float*, dbias, ptr)            \
  X(const float*, token_grad, ptr)

/* Every structure, X(STRUCT, FIELDS). */
#define PS_ABI_STRUCTS(X)                        \
  X(ps_summary, PS_SUMMARY_FIELDS)               \
  X(ps_lmhead_options, PS_LMHEAD_OPTIONS_FIELDS) \
  X(ps_lmhead_args, PS_LMHEAD_ARGS_FIELDS)

#define PS_ABI_MEMBER(type, name, kind) type name;

#endif
