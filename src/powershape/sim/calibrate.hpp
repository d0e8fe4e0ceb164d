#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "powershape/sim/profile.hpp"
#include "powershape/trace/trace.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/kernel_time.hpp"

namespace powershape::sim {

// What recorded telemetry says a GPU does, read from a folder `probe --record` wrote
// (conditions.json, trace.csv, kernels.csv) or one laid out as data/h200:
// square_wave_idle_summary.json (burst throughput against period, continuous throughput),
// sustained_60s_summary.json (sustained throughput and NVML clock), gemm_sustained_trace.csv
// (the reported clock's step response) and sustained_60s_trace.csv (power and temperature).
struct CalibrationData {
  std::vector<std::pair<double, double>> square;  // (period s, burst TFLOP/s), 50% duty, idle gaps
  double square_flops = 0;                        // FLOPs of one product in the bursts
  double continuous_tflops = 0;                   // back-to-back products for 4 s
  double sustained_tflops = 0, sustained_clock_mhz = 0, sustained_s = 0;
  double step_response_ms = 0;  // load start to the reported clock first under 1700 MHz
  // Where the load starts: the recording's own mark (probe --record knows when it started the
  // load), else the first reading of instantaneous power over 400 W (NVML's view, 100 ms late).
  bool step_from_mark = false;
  trace::Trace thermal;                       // instantaneous power and temperature over time
  std::vector<workload::KernelTime> kernels;  // kernels.csv, where there is one
  // A square wave probe --record ran, sized with the recording GPU's rates, as it sized them.
  struct SquareWave {
    double period_ms, duty;
    bool memory_gap;
    double tflops, avg_power_w;  // its bursts' throughput, its average power
  };
  // The 1 s periods' average power: with memory gaps they fix what a memory stream draws.
  std::vector<SquareWave> square_power;
  // Every other square wave (25% and 75% duty, memory gaps): each one's burst throughput, shown
  // against the profile before and after the fit, not fitted (the 50%-duty idle-gap ones and the
  // power figures pin the governor; 45 more simulations an evaluation would slow the fit sixfold).
  std::vector<SquareWave> other_squares;
  // The on-GPU clock probe across a load step from idle (clock_probe.csv or data/h200's
  // sm_clock_probe_step.csv: t_ms, sm_clock_mhz), where there is one: the real clock's mean over
  // the first millisecond of load (the fast limiter) and over 50-100 ms (the slow loop). 0: none.
  double probe_first_ms_mhz = 0, probe_50_100_ms_mhz = 0;
  int64_t probe_product_size = 4096;  // the products loaded during the probe (n^3)
  // What `repro -o` measured on the GPU, sustained (repro_*.json in the folder): each LM head or
  // matmul-softmax-matmul configuration's ms per iteration, NVML clock and average power; the
  // chunk effect.
  struct Sustained {
    std::string name;  // "lmhead 131072x896x151936 chunks=8"
    workload::Workload workload;
    double ms, sm_clock_mhz, avg_power_w;
    // Where it came from: its ratios pair it with the 1-chunk run of the same file; `label`
    // prefixes the figures of a folder added with add_repro ("repro_spread: ..."), empty for the
    // recording's own.
    std::string file, label;
  };
  std::vector<Sustained> repro;
  // The folders read (the recording, then each repro folder added): the fitted profile's sources
  // name them.
  std::vector<std::string> folders;
  workload::Rates rates{0, 0};
};
// Throws std::runtime_error naming the file and what it lacks.
CalibrationData read_calibration_data(const std::string& dir);
// Adds the repro -o results in another folder (repro_*.json), labelled with the folder's name:
// the chunk effect on other cards of the same kind, so that a fit meets their mean rather than
// one card's (two H200s of one pool differ by up to 3.7 points at one chunk count). Throws as
// read_calibration_data does, and where the folder holds none.
void add_repro(CalibrationData& d, const std::string& dir);

// One figure, measured and simulated.
struct Target {
  std::string name;
  double measured;
  double simulated;
  // The folder its measurement came from, as the name's prefix ("repro_spread: "); empty for the
  // recording's own. Ratios of one configuration in several folders show the GPU's own spread.
  std::string label = {};
  double error() const { return (simulated - measured) / measured; }
};
std::vector<Target> evaluate(const Profile& p, const CalibrationData& d);
// The other square waves' burst TFLOP/s ("square 75% memory 2 ms burst TFLOP/s").
std::vector<Target> evaluate_other_squares(const Profile& p, const CalibrationData& d);
// Where kernels.csv has the clock probe's real clock: each repro configuration's products and
// memory kernels, time-weighted ("<config> products' real MHz", "... memory kernels' real MHz").
// Shown, not fitted: the model runs every phase under one clock cap (its medium loop moves the
// cap), so it cannot put memory kernels above the products around them, as a real H200 does.
constexpr const char* kProductsRealMhz = " products' real MHz";
constexpr const char* kMemoryRealMhz = " memory kernels' real MHz";
bool is_phase_clock(const Target& t);
// The chunk effect's targets ("... chunks=C / 1 chunk") taken together, the yardstick: how
// many the model puts within half a point of the GPU's, on the GPU's side of 1 (a gain or a
// loss, as the GPU has it), and the mean distance in points.
struct RatioSummary {
  int count = 0, within_half_point = 0, same_side = 0;
  double mean_points = 0;
  double p90_points = 0;  // 9 in 10 are this close (Profile::chunk_ratio_points)
  // The same ratio measured in several runs (folders: other cards, other days) spans a range of
  // its own; the model can be no closer to "the GPU" than that. Of the configurations measured
  // more than once: how many, the widest range (points), and those whose model ratio lies more
  // than half a point outside their range.
  int several_runs = 0;
  double widest_run_range_points = 0;
  std::vector<std::string> outside_runs;
};
RatioSummary summarize_ratios(const std::vector<Target>& targets);
// RMS of the temperature the thermal model predicts from the recorded power, against the
// recorded temperature, in C.
double thermal_rms_c(const Profile& p, const trace::Trace& t);

// The time from a load step (instantaneous power first over 400 W) to the reported SM clock
// first under 1700 MHz, in ms; negative when the trace shows no such step.
double step_response_ms(const trace::Trace& t);

struct Calibration {
  Profile profile;
  std::vector<Target> before, after;
  double thermal_rms_before_c = 0, thermal_rms_after_c = 0;
  int evaluations = 0;
  std::vector<Target> kernels_before, kernels_after;  // per configuration, where kernels were
  std::vector<Target> squares_before, squares_after;  // evaluate_other_squares, not fitted
};
// Fits the thermal network to the recorded temperature, then compute.flops_per_cycle,
// power.dynamic_w, governor.fast_limit_w, governor.window_ms, governor.gain_mhz_per_w_s and
// governor.recovery_mhz_per_s (and, with square waves' power, power.memory_w and
// power.memory_phase_activity) to the throughput, clock, power and step-response figures; with
// repro results, then the medium loop (governor.medium_*) and kernels.issue_activity, then all
// of them together; with kernel times, the kernel model (kernel_fit.hpp). The fitted profile's
// accuracy.chunk_ratio_points is what its chunk ratios are then worth (0 without repro results).
// on_eval(i, most) after each simulation: i done of at most `most` (2 * max_evals, with repro
// results 4 * max_evals + 7; the fits stop earlier once they converge).
Calibration calibrate(const Profile& start, const CalibrationData& d, int max_evals = 400,
                      const std::function<void(int, int)>& on_eval = {});

}  // namespace powershape::sim
