#pragma once
// A trace cut into windows, each classed by what bound the GPU through it: idle, compute-bound,
// memory-bound, or bursty (power swinging between phases within the window, as a training step's
// products, element-wise kernels and host gaps do). What the DVFS advisor steers by: a
// compute-bound window's time follows the clock, a memory-bound one's barely does.
#include <cstdint>
#include <string>
#include <vector>

#include "powershape/trace/trace.hpp"

namespace powershape::analysis {

enum class PhaseClass { kIdle, kCompute, kMemory, kBursty };
inline constexpr int kPhaseClassCount = 4;
std::string to_string(PhaseClass c);

struct PhaseWindow {
  int64_t begin_ns = 0, end_ns = 0;
  PhaseClass cls = PhaseClass::kIdle;
  double energy_j = 0;
  double power_w = 0;       // energy / duration
  double power_cv = 0;      // spread of the finest power readings in it (std / mean)
  double sm_clock_mhz = 0;  // time-weighted mean of the reported clock
  double util_gpu_pct = -1, util_mem_pct = -1;  // time-weighted means; -1: not in the trace
  double power_capped = 0;                      // fraction of it with the power-cap reason set
  double memory_power_w = -1;  // NVML's memory-scope power, time-weighted; -1: not recorded
  double seconds() const { return static_cast<double>(end_ns - begin_ns) * 1e-9; }
};

struct PhaseOptions {
  double window_s = 1;
  // A window whose power readings spread by this much (std / mean) alternates between phases.
  double bursty_cv = 0.15;
  // NVML's memory utilisation at or above which a window is memory-bound: a large product keeps
  // the memory controller ~25% busy on an H200, a stream ~80-100%.
  double memory_util_pct = 50;
  // ... except in a window at the power cap at least capped_share of its time, which is
  // memory-bound only at or above stream_util_pct: a training step mixes products and memory-bound
  // kernels faster than NVML's utilisation resolves (an H200's memory controller 52-61% busy at its
  // 700 W cap, where a memory stream alone draws ~460 W): the SMs' power binds such a window. A
  // stream that reaches the cap (a low limit, a small board) keeps memory stream_util_pct busy and
  // stays memory-bound.
  double capped_share = 0.5, stream_util_pct = 80;
  // GPU utilisation below which a window is idle; without utilisation in the trace, power within
  // idle_power_share of the way from the trace's lowest power to the power limit is.
  double idle_util_pct = 10, idle_power_share = 0.1;
};

// The windows of GPU `gpu` over [from_ns, to_ns) (both 0: the whole recording); a last window
// shorter than half a window joins the one before it. Throws std::invalid_argument on a window
// outside 10 ms..1 h, std::runtime_error when the GPU has no power readings.
std::vector<PhaseWindow> classify_phases(const trace::Trace& t, int gpu, const PhaseOptions& o = {},
                                         int64_t from_ns = 0, int64_t to_ns = 0);

struct PhaseShare {
  PhaseClass cls;
  int windows = 0;
  double seconds = 0, energy_j = 0;
};
// Time and energy of each class, in PhaseClass order.
std::vector<PhaseShare> phase_shares(const std::vector<PhaseWindow>& w);

}  // namespace powershape::analysis
