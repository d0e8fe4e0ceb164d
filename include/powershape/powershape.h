/* powershape's C API: record energy, power, clocks and throttling of named parts of a program,
 * and run the chunked LM head + cross-entropy. Plain C, no C++ types: any language can bind it
 * (the Python package does, with ctypes). Link libpowershape_c.so.
 *
 * Errors: a function that fails returns NULL or a negative value, ps_last_error() says why in one
 * line and ps_last_error_kind() what kind of failure it was (per thread). */
#ifndef POWERSHAPE_POWERSHAPE_H
#define POWERSHAPE_POWERSHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "powershape_abi.h"

#ifdef __cplusplus
extern "C" {
#endif
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* "0.2.0" */
const char* ps_version(void);
/* Why the last call on this thread failed; "" when it did not. */
const char* ps_last_error(void);
/* What kind of failure it was: a caller's bad argument, file or shape (PS_ERROR_INVALID_INPUT),
 * something this machine, driver or device lacks (PS_ERROR_UNSUPPORTED), or a device, driver or
 * system call that failed (PS_ERROR_DEVICE); PS_ERROR_NONE when it did not fail. */
enum {
  PS_ERROR_NONE = 0,
  PS_ERROR_INVALID_INPUT = 1,
  PS_ERROR_UNSUPPORTED = 2,
  PS_ERROR_DEVICE = 3
};
int ps_last_error_kind(void);
/* The structures as this library was compiled with them, from powershape_abi.h's tables: a line a
 * field, "STRUCT FIELD KIND OFFSET", and a line a structure, "STRUCT sizeof SIZE". A binding
 * builds (or checks) its own structures from it: the Python package does at load. */
const char* ps_abi_layout(void);
/* The clock regions are stamped on: CLOCK_MONOTONIC, ns. */
int64_t ps_now_ns(void);
/* Marks the beginning (begin != 0) or end of a region `name` at t_ns (0: now) for the powershape
 * that runs this program (`monitor`, `compare`, `tune`, `optimize`: $POWERSHAPE_CONTROL), as
 * `powershape mark` does, without a recorder of its own. Returns 1 when sent, 0 when no powershape
 * runs this program (or it stopped listening), -1 on a bad name (ps_last_error says why). */
int ps_mark(int begin, const char* name, int64_t t_ns);

/* ---- Recording ---------------------------------------------------------------------------- */

typedef struct ps_recorder ps_recorder;

/* How the energy of a window was found. */
enum { PS_ENERGY_NONE = 0, PS_ENERGY_COUNTER = 1, PS_ENERGY_POWER = 2 };

/* What one GPU did over a region (powershape_abi.h has its fields). A figure the source cannot give
 * is NaN. */
typedef struct ps_summary {
  PS_SUMMARY_FIELDS(PS_ABI_MEMBER)
} ps_summary;

/* Opens a recorder and starts sampling every interval_ms (0: 10 ms). source: "nvml" (NVIDIA
 * GPUs; gpus/n_gpus pick NVML indices, NULL/0 for all), "fake:TRACE.csv" (replays a recorded
 * trace), "hwmon[:ROOT]" (Jetson rails) or "sim:PROFILE" (a simulated GPU running the LM head
 * back to back, simulated up front: ~1 s to open). NULL on failure. */
ps_recorder* ps_recorder_open(const char* source, const int* gpus, int n_gpus, double interval_ms);
/* The number of GPUs recorded; each summary call fills one ps_summary per GPU. */
int ps_recorder_gpu_count(const ps_recorder* r);
/* Begins a region at t_ns (0: now). Regions may overlap and nest; names may repeat; at most 1024
 * are open at once (one more is refused). 0 or -1. */
int ps_region_begin(ps_recorder* r, const char* name, int64_t t_ns);
/* Ends the innermost open region of that name at t_ns (0: now) and writes its summary on each
 * GPU to out[0 .. n_out), when out is not NULL. Returns the number of GPUs, or -1. */
int ps_region_end(ps_recorder* r, const char* name, int64_t t_ns, ps_summary* out, int n_out);
/* The summaries of the last region of that name that ended, as ps_region_end gave them (kept for
 * the 1024 names that ended most recently). */
int ps_region_summary(const ps_recorder* r, const char* name, ps_summary* out, int n_out);
/* The CPU's zones the recorder reads through Linux powercap (RAPL, Intel and AMD: each package and
 * its DRAM), at each region's begin and end call: zone i's name ("package-0", "package-0 dram")
 * into name[0 .. len), NUL-terminated, when name is not NULL. Returns the number of zones (0:
 * none), or -1. */
int ps_cpu_zone(const ps_recorder* r, int i, char* name, int len);
/* Each zone's energy over the last region of that name that ended, J in joules[0 .. n) (NaN for a
 * zone that could not be read: energy_uj is root's alone since Linux 5.10). Returns the number of
 * zones, or -1. */
int ps_region_cpu_energy(const ps_recorder* r, const char* name, double* joules, int n);
/* Stops sampling and frees the recorder. NULL is allowed. */
void ps_recorder_close(ps_recorder* r);

/* ---- The LM head ------------------------------------------------------------------------ */

enum { PS_REDUCTION_MEAN = 0, PS_REDUCTION_SUM = 1, PS_REDUCTION_NONE = 2 };

/* The op's options, each field said in powershape_abi.h. */
typedef struct ps_lmhead_options {
  PS_LMHEAD_OPTIONS_FIELDS(PS_ABI_MEMBER)
} ps_lmhead_options;

/* The op's tensors (device pointers) and shape, each field said in powershape_abi.h. */
typedef struct ps_lmhead_args {
  PS_LMHEAD_ARGS_FIELDS(PS_ABI_MEMBER)
} ps_lmhead_args;

/* The defaults: the default chunk count (about 0.5 GiB of logits), ignore_index -100, mean, no
 * smoothing, z-loss or soft-cap, backward, bf16 dW overwritten, the exponent in the logits
 * product where the GPU allows. */
void ps_lmhead_options_default(ps_lmhead_options* o);
/* 0 when the options are ones the op takes; else -1, and ps_last_error names the option and its
 * range (PS_ERROR_INVALID_INPUT). Needs no GPU: the Python package checks its arguments with it. */
int ps_lmhead_options_check(const ps_lmhead_options* o);
/* 1 when ps_lmhead_run, with these options on the current CUDA device and x and w 16-byte
 * aligned (as torch allocates them), takes the softmax's exponent in the logits product
 * (fuse_exp, no label smoothing, an sm_90 GPU and a build for sm_90a), 0 when it takes a pass of
 * its own (options that never fuse answer 0 without asking the device); -1 on a bad option, or
 * when the device must be asked and there is none, or in a build without CUDA (ps_last_error
 * says which). The tuned chunk count is keyed on it. */
int ps_lmhead_will_fuse(const ps_lmhead_options* o);
/* Workspace bytes ps_lmhead_run needs for this shape and options (no GPU needed); 0 on error:
 * N above 2^40, D above 2^20, V above 2^31 - 1, a workspace larger than memory can address, or
 * a bad option (ps_last_error says which). */
size_t ps_lmhead_workspace_bytes(int64_t n, int64_t d, int64_t v, const ps_lmhead_options* o);
/* Runs the LM head forward (and backward) on `stream` (a cudaStream_t; NULL: the default
 * stream), asynchronously. 0, or -1 (a bad shape or option, a CUDA failure, a build without
 * CUDA). */
int ps_lmhead_run(const ps_lmhead_args* a, const ps_lmhead_options* o, void* stream);
/* Multiplies a's dx, dw and dbias (those not NULL) by *factor, an fp32 on the device, on
 * `stream`: the host does not wait for it, and nothing is touched when it is 1. For gradients
 * made in the forward pass and scaled by the loss's incoming gradient in the backward. */
int ps_lmhead_scale_gradients(const ps_lmhead_args* a, const ps_lmhead_options* o,
                              const float* factor, void* stream);
/* The chunk count `powershape tune` cached for this shape (forward_only: the inference LM head;
 * exp_in_product: the op with the exponent in the logits product, as it runs on an sm_90 GPU,
 * tuned with --exp-in-product) and objective ("time", "energy", "edp", "cost:ETA") on GPU `gpu`
 * (an NVML index) as it is now: its name, driver and power limit; 0 when nothing is cached, -1 on
 * an error (no driver). */
int ps_lmhead_tuned_chunks(int64_t n, int64_t d, int64_t v, int forward_only, int exp_in_product,
                           const char* objective, int gpu);

/* ---- Online chunk-count selection -------------------------------------------------------- */

typedef struct ps_chunker ps_chunker;
/* A chunker over the chunk counts `arms` (NULL: 1, 2, 4, ..., 64) minimising `objective`: "time",
 * "energy", "edp" or "cost:ETA" (Zeus' eta E + (1 - eta) P_max T; p_max_w the power limit). NULL
 * on a bad argument (ps_last_error says which). */
ps_chunker* ps_chunker_open(const int* arms, int n_arms, const char* objective, double p_max_w);
/* The chunk count for the next step. */
int ps_chunker_next(const ps_chunker* c);
/* What the step that used `chunks` (one of its counts) took: ms above 0 and at most a week;
 * joules 0 (unknown, for the time objective) or more, at most 100 kW for that time. 0, or -1 on
 * any other value, which changes nothing (ps_last_error says which). */
int ps_chunker_report(ps_chunker* c, int chunks, double ms, double joules);
/* Its current choice, and whether it has settled on it (1) or is exploring (0). */
int ps_chunker_best(const ps_chunker* c);
int ps_chunker_settled(const ps_chunker* c);
/* Frees it. NULL is allowed. */
void ps_chunker_close(ps_chunker* c);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif

#endif /* POWERSHAPE_POWERSHAPE_H */
