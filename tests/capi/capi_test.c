/* The C API as a C program uses it (compiled as C11, warnings as errors): a recorder on a replayed
 * H200 trace with overlapping regions, the errors, and the LM head's host calls.
 *   capi_test TRACE.csv */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "powershape/powershape.h"

static int failures = 0, passed = 0;
#define CHECK(what, cond)                    \
  do {                                       \
    if (cond) {                              \
      ++passed;                              \
    } else {                                 \
      ++failures;                            \
      printf("FAIL %s (%s)\n", what, #cond); \
    }                                        \
  } while (0)

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  char source[4096];
  snprintf(source, sizeof source, "fake:%s", argv[1]);
  CHECK("a version", strlen(ps_version()) >= 5);

  ps_recorder* r = ps_recorder_open(source, NULL, 0, 2);
  CHECK("a recorder opens on a replayed trace", r != NULL);
  if (r == NULL) {
    printf("%s\n", ps_last_error());
    return 1;
  }
  CHECK("one GPU", ps_recorder_gpu_count(r) == 1);
  const int64_t t0 = ps_now_ns();
  CHECK("begin", ps_region_begin(r, "whole", 0) == 0);
  sleep_ms(200);
  CHECK("an overlapping region begins", ps_region_begin(r, "inner", 0) == 0);
  sleep_ms(400); /* the replayed load starts 0.5 s in */
  ps_summary s[2];
  memset(s, 0, sizeof s);
  CHECK("end returns the GPU count", ps_region_end(r, "inner", 0, s, 2) == 1);
  CHECK("its length", s[0].seconds > 0.35 && s[0].seconds < 0.6);
  CHECK("its energy", isfinite(s[0].energy_j) && s[0].energy_j > 0);
  CHECK("average power not above peak", s[0].avg_power_w <= s[0].peak_power_w * 1.01);
  CHECK("an SM clock", s[0].sm_clock_mean_mhz > 300 && s[0].sm_clock_p95_mhz <= 1980);
  CHECK("a power-capped share", s[0].power_capped >= 0 && s[0].power_capped <= 1);
  ps_summary again;
  CHECK("the last summary of a name", ps_region_summary(r, "inner", &again, 1) == 1);
  CHECK("is the same", again.energy_j == s[0].energy_j && again.seconds == s[0].seconds);
  CHECK("end at a given time", ps_region_end(r, "whole", t0 + 500000000, s, 1) == 1);
  CHECK("spans it", fabs(s[0].seconds - 0.5) < 0.01);

  CHECK("ending a region not open fails", ps_region_end(r, "nope", 0, NULL, 0) == -1);
  CHECK("and says which", strstr(ps_last_error(), "nope") != NULL);
  CHECK("a caller's mistake", ps_last_error_kind() == PS_ERROR_INVALID_INPUT);
  CHECK("a summary of no region fails", ps_region_summary(r, "never", s, 1) == -1);
  const int zones = ps_cpu_zone(r, 0, NULL, 0);
  double joules[8];
  CHECK("the CPU's zones are counted", zones >= 0);
  CHECK("a region's CPU energy, one a zone", ps_region_cpu_energy(r, "inner", joules, 8) == zones);
  CHECK("no CPU energy of a region not ended", ps_region_cpu_energy(r, "never", joules, 8) == -1);
  char zone[8];
  CHECK("a zone past the last is refused", ps_cpu_zone(r, zones, zone, sizeof zone) == -1);
  CHECK("an empty name fails", ps_region_begin(r, "", 0) == -1);
  CHECK("a success clears the error", ps_region_begin(r, "x", 0) == 0 && ps_last_error()[0] == 0 &&
                                          ps_last_error_kind() == PS_ERROR_NONE);
  ps_recorder_close(r);
  ps_recorder_close(NULL);

  ps_recorder* sim = ps_recorder_open("sim:h200", NULL, 0, 5);
  CHECK("a simulated GPU records", sim != NULL && ps_region_begin(sim, "load", 0) == 0);
  sleep_ms(300);
  CHECK("its region", sim != NULL && ps_region_end(sim, "load", 0, s, 1) == 1);
  CHECK("at the simulated LM head's power", s[0].avg_power_w > 300 && s[0].avg_power_w < 1000);
  ps_recorder_close(sim);
  CHECK("an unknown profile fails", ps_recorder_open("sim:nosuch", NULL, 0, 10) == NULL);
  CHECK("and names it", strstr(ps_last_error(), "nosuch") != NULL);

  CHECK("a bad source fails", ps_recorder_open("bogus", NULL, 0, 10) == NULL);
  CHECK("and names it", strstr(ps_last_error(), "bogus") != NULL);
  CHECK("as the caller's mistake", ps_last_error_kind() == PS_ERROR_INVALID_INPUT);
  CHECK("a bad interval fails", ps_recorder_open(source, NULL, 0, -1) == NULL);
  CHECK("and names it", strstr(ps_last_error(), "interval_ms") != NULL);
  CHECK("a huge interval fails", ps_recorder_open(source, NULL, 0, 1e308) == NULL);
  CHECK("in a short line (not 300 digits)",
        strstr(ps_last_error(), "1e+308") != NULL && strlen(ps_last_error()) < 200);

  ps_lmhead_options o;
  ps_lmhead_options_default(&o);
  CHECK("default options", o.chunks == 0 && o.ignore_index == -100 && o.backward == 1 &&
                               o.grad_scale == 1 && o.dw_fp32 == 0 && o.accumulate == 0 &&
                               o.fuse_exp == 1);
  const size_t ws = ps_lmhead_workspace_bytes(16384, 896, 151936, &o);
  /* Sizes that would wrap the arithmetic around (N = 2^62 once gave a few hundred bytes). */
  CHECK("N = 2^62 is refused", ps_lmhead_workspace_bytes((int64_t)1 << 62, 896, 151936, &o) == 0);
  CHECK("and named", strstr(ps_last_error(), "N = ") != NULL);
  o.chunks = 1;
  CHECK("a workspace past what memory addresses is refused",
        ps_lmhead_workspace_bytes((int64_t)1 << 40, 896, ((int64_t)1 << 31) - 1, &o) == 0);
  CHECK("and said", strstr(ps_last_error(), "larger than memory") != NULL);
  ps_lmhead_options_default(&o);
  /* The default count: a chunk of at most 0.5 GiB of bf16 logits (rows padded to 8) and per-token
   * scratch; no GPU needed. */
  CHECK("the default LM head's workspace",
        ws >= (size_t)1024 * 151936 * 2 && ws < ((size_t)512 << 20) + (1 << 20));
#ifdef CAPI_HAS_CUDA
  o.chunks = 1;
  const size_t ws1 = ps_lmhead_workspace_bytes(16384, 896, 151936, &o);
  /* One chunk: its logits, and the exponent-in-the-product path's pair (8 bytes) a row a 256-logit
   * tile. */
  const size_t pairs = (size_t)16384 * ((151936 + 255) / 256) * 8;
  CHECK("one chunk's", ws1 >= (size_t)16384 * 151936 * 2 + pairs &&
                           ws1 < (size_t)16384 * 151936 * 2 + pairs + (1 << 20));
  o.reduction = 7;
  CHECK("a bad reduction fails", ps_lmhead_workspace_bytes(16, 8, 8, &o) == 0);
  CHECK("and says so", strstr(ps_last_error(), "reduction") != NULL);
  ps_lmhead_options_default(&o);
  o.label_smoothing = 0.1f; /* the two-read pass: no exponent in the product, on any GPU */
  CHECK("label smoothing never fuses", ps_lmhead_will_fuse(&o) == 0);
  ps_lmhead_options_default(&o);
  o.fuse_exp = 0;
  CHECK("nor fuse_exp 0", ps_lmhead_will_fuse(&o) == 0);
  ps_lmhead_options_default(&o);
  ps_lmhead_args none;
  memset(&none, 0, sizeof none);
  CHECK("scaling by a NULL factor fails", ps_lmhead_scale_gradients(&none, &o, NULL, NULL) == -1);
  CHECK("and names it", strstr(ps_last_error(), "factor") != NULL);
#else
  CHECK("without CUDA the LM head's run says so", ps_lmhead_run(NULL, &o, NULL) == -1);
  CHECK("named", strstr(ps_last_error(), "without CUDA") != NULL);
  CHECK("as what this build lacks", ps_last_error_kind() == PS_ERROR_UNSUPPORTED);
  CHECK("and scaling", ps_lmhead_scale_gradients(NULL, &o, NULL, NULL) == -1);
  CHECK("whether it fuses cannot be said",
        ps_lmhead_will_fuse(&o) == -1 && ps_last_error_kind() == PS_ERROR_UNSUPPORTED);
#endif
  o.reduction = 7;
  CHECK("a bad option: whether it fuses is refused",
        ps_lmhead_will_fuse(&o) == -1 && ps_last_error_kind() == PS_ERROR_INVALID_INPUT);
  ps_lmhead_options_default(&o);
  CHECK("the ABI layout names every structure",
        strstr(ps_abi_layout(), "ps_summary sizeof ") &&
            strstr(ps_abi_layout(), "ps_lmhead_options fuse_exp i32 ") &&
            strstr(ps_abi_layout(), "ps_lmhead_args token_grad ptr "));
  /* The online chunker: explores every count once first, then settles on the cheapest. */
  ps_chunker* ch = ps_chunker_open(NULL, 0, "time", 0);
  CHECK("a chunker opens", ch != NULL);
  for (int step = 0; step < 60 && ch != NULL; ++step) {
    const int k = ps_chunker_next(ch);
    CHECK("reports are taken", ps_chunker_report(ch, k, k == 8 ? 90.0 : 100.0 + k, 0) == 0);
  }
  CHECK("it settles on the cheapest count",
        ps_chunker_settled(ch) == 1 && ps_chunker_best(ch) == 8);
  ps_chunker_close(ch);
  CHECK("a bad objective is refused", ps_chunker_open(NULL, 0, "speed", 0) == NULL);
  CHECK("and named", strstr(ps_last_error(), "objective") != NULL);
  printf("%d passed, %d failed\n", passed, failures);
  return failures == 0 ? 0 : 1;
}
