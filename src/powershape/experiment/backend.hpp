#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "powershape/telemetry/sampler.hpp"
#include "powershape/trace/trace.hpp"
#include "powershape/workload/builders.hpp"
#include "powershape/workload/kernel_time.hpp"

namespace powershape::experiment {

// One measurement window: a configuration run back to back.
struct Measurement {
  std::size_t config = 0;
  int round = -1;  // -1: warm-up
  double seconds = 0;
  int iterations = 0;
  double ms_per_iteration = 0;  // from device timing (CUDA events, or the simulator's clock)
  double compute_tflops = 0;    // FLOPs of the compute phases over the time they took
  double energy_j = 0;          // from the energy counter over the window
  int energy_updates = 0;       // counter updates inside the window
  double avg_power_w = 0;
  double sm_clock_mhz = 0;  // time-weighted mean of the reported clock
  double power_capped = 0;  // fraction of the window
  double thermal_throttled = 0;
  double peak_temp_c = 0;
  double extra_gib = 0;  // device memory beyond inputs and outputs (GPU: measured)
  double j_per_iteration() const { return iterations > 0 ? energy_j / iterations : 0; }
};
nlohmann::json to_json(const Measurement& m);

// The sampler an experiment on a GPU records with: the energy counter (~3 ms a read on an H200)
// read at its own ~100 ms update rate, 3% of a core, so that a 2 s window spans ~20 updates.
telemetry::SamplerOptions measurement_sampler_options();

// Fills the telemetry part of a measurement from a trace over [begin, end).
void add_telemetry(Measurement& m, const trace::Trace& t, int64_t begin_ns, int64_t end_ns);

// Where configurations run: a GPU (kernels + NVML) or the simulator. The engine sees only this.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string describe() const = 0;
  virtual bool simulated() const = 0;
  // How far its chunk ratios may be from the real GPU's, as a fraction (9 in 10 were within it in
  // the simulated device's calibration); 0 for a GPU, or where no one measured it.
  virtual double ratio_error() const { return 0; }
  // The slowest thermal time constant known of the device (a simulated one's heat sink, die or
  // fan), seconds; 0 where it is not known.
  virtual double thermal_time_constant_s() const { return 0; }
  // Whether each configuration runs on a device of its own, warmed up on its own: a simulated
  // device whose mechanisms hold state from one window to the next (a slowdown's hysteresis, a
  // held brake), where interleaving would measure each configuration under what the others left
  // (a GPU runs them all on the one die, as it is).
  virtual bool each_config_apart() const { return false; }
  virtual nlohmann::json device_json() const = 0;  // device, driver, clocks, limits
  // The rates square waves are sized with: dense bf16 products and streaming copies, unthrottled.
  virtual workload::Rates peak_rates() const = 0;
  // The configurations to compare, one workload each.
  virtual void set_configs(std::vector<workload::Plan> configs) = 0;
  virtual std::size_t config_count() const = 0;
  virtual std::string config_name(std::size_t i) const = 0;
  // Runs configuration i back to back for at least `seconds` and measures it.
  virtual Measurement measure(std::size_t i, double seconds) = 0;
  // Each kernel of configuration i, timed over `iterations` back to back (the median), with the
  // reported SM clock's mean over them. Throws std::runtime_error where there are no kernels (a
  // user's command).
  virtual std::vector<workload::KernelTime> time_kernels(std::size_t i, int iterations);
  // The SM clock as the GPU itself sees it (the on-GPU clock probe, 10 us bins: t ms, MHz) over
  // `idle_s` of idle and then `load_s` of configuration i back to back; empty where there is no
  // probe (the simulator, a user's command).
  virtual std::vector<std::pair<double, double>> probe_clock_step(std::size_t i, double idle_s,
                                                                  double load_s);
  virtual void idle(double seconds) = 0;
  virtual std::optional<double> temperature_c() = 0;
  // The backend's clock (the one its trace's timestamps are on) and what it has recorded so far.
  virtual int64_t now_ns() const = 0;
  virtual trace::Trace recorded() = 0;
};

}  // namespace powershape::experiment
