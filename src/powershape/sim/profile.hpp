#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "powershape/trace/trace.hpp"
#include "powershape/workload/args.hpp"

namespace powershape::sim {

// A GPU as the simulator models it. Every figure in a profile file carries its source in the
// file's "sources"; "status" says whether it was calibrated against recorded telemetry
// (`powershape sim calibrate`) or estimated from public figures.
struct Profile {
  std::string name;
  std::string status;  // "calibrated" or "estimated"
  std::vector<std::string> sources;

  // Clocks and voltage: the V/f table, (MHz, volts), ascending.
  double min_mhz = 0, max_mhz = 0;
  std::vector<std::pair<double, double>> vf_table;

  // Performance: a compute phase runs at flops_per_cycle x clock x the phase's efficiency; a
  // memory phase at bandwidth x (1 - s + s x clock / max clock), s = mem_clock_sensitivity.
  double flops_per_cycle = 0;
  double sms = 0;  // multiprocessors: how many of a product's tiles run at once
  double mem_bandwidth_gbs = 0;
  double mem_clock_sensitivity = 0;

  // Power: idle + dynamic_w x activity x (V/Vmax)^2 x (f/fmax) + memory_w x memory activity
  // + leakage_w x (1 + leakage_per_c x (T - leakage_ref_c)).
  double idle_w = 0, dynamic_w = 0, memory_w = 0, leakage_w = 0, leakage_per_c = 0,
         leakage_ref_c = 0;
  double memory_phase_activity = 0;  // SM activity of a memory-bound phase
  double idle_activity = 0;          // SM activity of an idle gap

  // Thermal: die -> heat sink -> ambient, two RC stages.
  double ambient_c = 0, r_die_c_per_w = 0, tau_die_s = 0, r_sink_c_per_w = 0, tau_sink_s = 0;
  double max_operating_c = 0;  // the thermal loop holds the die below this

  // Governor: a slow loop on power averaged over window_ms, updated every update_ms, moving the
  // clock cap by gain_mhz_per_w_s x (power - limit) x dt; a fast limiter that holds instantaneous
  // power under fast_limit_w within one step; a thermal loop likewise on temperature.
  // Either cap rises no faster than recovery_mhz_per_s once power or temperature is back under
  // its limit.
  double power_limit_w = 0, fast_limit_w = 0, window_ms = 0, update_ms = 0, gain_mhz_per_w_s = 0;
  double recovery_mhz_per_s = 0;
  double thermal_gain_mhz_per_c_s = 0;
  // Optional ("governor.medium_window_ms", "medium_gain_mhz_per_w_s" and "medium_limit_w"
  // together; gain 0: none): a second power loop on a shorter window and a higher gain, holding
  // power averaged over that window under its own limit (at or above power_limit_w; a user's
  // power limit scales it). A real H200 runs its LM head at the power limit on average at any
  // chunk count, yet reports a clock ~60 MHz higher once its products are split into phases of
  // ~14 ms and less (8 chunks against 4 at 131072x896): a loop on ~20 ms pulls the clock down
  // during long products, which neither the sub-millisecond limiter nor the slow loop expresses.
  double medium_window_ms = 0, medium_gain_mhz_per_w_s = 0, medium_limit_w = 0;

  // Mechanisms a small box may have beyond the loops above, each optional and off where its
  // fields are absent: a profile carries one only where there is evidence for it.
  // An asymmetric loop ("governor.spike_window_ms", "spike_limit_w", "spike_gain_mhz_per_w_s",
  // "spike_recovery_mhz_per_s" together; gain 0: none): power averaged over a short window above
  // its limit pulls the clock cap down at once (gain x excess x dt, from the clock that runs), and
  // the cap comes back no faster than its own recovery, slower than the other loops': a spike's
  // cost outlasts the spike.
  double spike_window_ms = 0, spike_limit_w = 0, spike_gain_mhz_per_w_s = 0,
         spike_recovery_mhz_per_s = 0;
  // A thermal slowdown with hysteresis ("thermal.slowdown_c", "slowdown_hysteresis_c",
  // "slowdown_step_mhz", "slowdown_interval_ms" together; slowdown_c 0: none): a die at or above
  // slowdown_c takes slowdown_step_mhz off the clock cap, and another step every interval it stays
  // there; it gives a step back each interval the die spends below slowdown_c - hysteresis, and
  // holds between the two (NVML: SW thermal slowdown).
  double slowdown_c = 0, slowdown_hysteresis_c = 0, slowdown_step_mhz = 0, slowdown_interval_ms = 0;
  // A fan (the optional "fan" section: min_pct, start_c, full_c, hysteresis_c, tau_s,
  // r_sink_at_min_c_per_w): its target speed rises linearly from min_pct at start_c to 100% at
  // full_c and falls only once the die is hysteresis_c under the temperature that set it; the
  // speed follows the target with time constant tau_s. The heat sink's conductance to air goes
  // linearly with the speed from 1 / r_sink_at_min_c_per_w at min_pct to 1 / thermal.r_sink_c_per_w
  // at 100%, its heat capacity (tau_sink_s / r_sink_c_per_w) staying. fan_tau_s 0: no fan.
  double fan_min_pct = 0, fan_start_c = 0, fan_full_c = 0, fan_hysteresis_c = 0, fan_tau_s = 0,
         fan_r_sink_at_min_c_per_w = 0;
  // A power supply's ceiling (the optional "supply" section: limit_w, rest_w, window_ms,
  // degraded_mhz, hold_s): the box draws the GPU's power plus rest_w (CPU, memory, storage); once
  // that averaged over window_ms passes limit_w, the supply's protection holds the clock at
  // degraded_mhz for hold_s (NVML: HW power brake). supply_limit_w 0: none.
  double supply_limit_w = 0, supply_rest_w = 0, supply_window_ms = 0, supply_degraded_mhz = 0,
         supply_hold_s = 0;

  // Sensor (what NVML reports): readings change every sensor_update_ms; power usage averages
  // usage_window_ms; the driver's power buffer holds a sample every driver_sample_ms.
  double sensor_update_ms = 0, usage_window_ms = 0, driver_sample_ms = 0;
  double clock_step_mhz = 0;  // reported clocks are multiples of this
  // Whether NVML shows the power limit and the power-cap reason (a DGX Spark's does not: its
  // firmware limits act unseen); optional "sensor.reports_power_cap", default true.
  bool reports_power_cap = true;

  // Kernels (the optional "kernels" section; a profile without it has none of these costs): each
  // kernel costs launch_us beyond its work; an m x n x k product takes max(arithmetic, its
  // operands' traffic) plus its result's traffic (the epilogue: written, and read when it
  // accumulates) times min(1, epilogue_k / k): a tile's epilogue hides behind other tiles' main
  // loops once k is long enough (a dW of k = 256 rows exposes it, one of k = 2048 mostly not);
  // a memory kernel named in memory_efficiency reaches that fraction of the bandwidth (a softmax
  // that computes exponentials is far from a copy); a name no built-in workload runs is refused
  // (workload::memory_kernel_names), and a kernel not named runs at a copy's bandwidth.
  // A memory kernel short of the bandwidth is held back by its instructions (a softmax's
  // exponentials and reductions), so its SMs are busy where a copy's wait: its SM activity is
  // e x power.memory_phase_activity + (1 - e) x issue_activity at memory efficiency e (optional
  // "kernels.issue_activity"; 0: every memory kernel draws as a copy does).
  // A product's last partial wave of tiles costs wave_quantization x what it leaves idle
  // (optional "kernels.wave_quantization" in [0, 1]; 0: stream-K evens every wave out).
  // A product's result traffic (its epilogue) moves at epilogue_efficiency of the copy
  // bandwidth (optional, default 1: an fp32 read-modify-write runs slower than a copy).
  // A kernel that works a row a block and reads each row again (the msm softmax's three passes)
  // finds the later reads in L2 while every resident block's row fits in it: up to l2_row_bytes a
  // row (L2 over the blocks resident at once; optional "kernels.l2_row_bytes", 0: always).
  // A large product reads its operands from memory more than once: L2 keeps the smaller one (S
  // bytes) only for a while as the kernel sweeps the other, and reads it again about every
  // reread_flops of work, at most once every reread_span rows (or columns) of the output's other
  // side (where S is too large to last even that long): S x min(flops / reread_flops, other /
  // reread_span) more bytes. So a chunk's products, whose activations are smaller, move less per
  // flop, and their memory draws less power (optional "kernels.reread_flops" and
  // "kernels.reread_span"; reread_flops 0: operands are read once, reread_span 0: no bound).
  double kernel_launch_us = 0, epilogue_k = 0, issue_activity = 0, wave_quantization = 0;
  double epilogue_efficiency = 1, l2_row_bytes = 0, reread_flops = 0, reread_span = 0;
  std::vector<std::pair<std::string, double>> memory_efficiency;
  double memory_efficiency_of(const std::string& kernel) const;

  // Optional named power modes (Jetson): each sets a power limit and a maximum clock.
  struct Mode {
    std::string name;
    double power_limit_w;
    double max_mhz;
  };
  std::vector<Mode> power_modes;
  // How far the profile's chunk ratios (a chunk count's time over one chunk's) were from the GPU's
  // in its calibration, in percentage points: 9 in 10 of those `sim calibrate` compared with
  // `repro` results were this close (optional "accuracy.chunk_ratio_points"; 0: not measured).
  // `repro` on the simulated device calls a smaller difference "within" it: no verdict.
  double chunk_ratio_points = 0;
  // The clock ceiling of the power mode applied (apply_power_mode); 0: none. A ceiling, not a new
  // maximum: the chip's V/f curve and power at each clock stay what they are.
  double mode_max_mhz = 0;

  double volts(double mhz) const;
  // The unthrottled rates: dense products at the maximum clock, and the memory bandwidth (bytes
  // read + written per second).
  double peak_flops_per_s() const { return flops_per_cycle * max_mhz * 1e6; }
  double peak_bytes_per_s() const { return mem_bandwidth_gbs * 1e9; }
};

// Throws std::runtime_error naming the missing or out-of-range field ("governor.window_ms: ...").
Profile profile_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Profile& p);
// NAME (looked up in $POWERSHAPE_PROFILES, else util::share_dir()'s profiles/) or a path.
Profile load_profile(const std::string& name_or_path);
std::string profiles_dir();
// The shipped profiles' names (profiles_dir()'s *.json), sorted.
std::vector<std::string> profile_names();
// The profile named like a GPU NVML reports ("NVIDIA H200" -> "h200", "NVIDIA GeForce RTX 4090"
// -> "rtx4090"), or "" when none is.
std::string profile_for_gpu(const std::string& gpu_name);
// Each GPU name's profile's power limit (W) and the profile's name, for the GPUs a recording holds
// no limit of (an nvidia-smi log, a replay of a recording without device lines): the profile
// matched by the GPU's name, else by the replayed recording's path (fake:h200/..., data/h200/...).
std::map<std::string, std::pair<double, std::string>> profile_limits(const trace::Trace& header);

// The plans the workload's options describe on a device with these unthrottled rates, a kernel
// timeline's --recorded-on profile looked up (workload::build_plans).
std::vector<workload::Plan> workload_plans(workload::WorkloadArgs& a,
                                           const workload::Rates& device);
// Applies a named power mode; throws naming the modes there are.
void apply_power_mode(Profile& p, const std::string& mode);

}  // namespace powershape::sim
