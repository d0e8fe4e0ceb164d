#pragma once
// A job run under a power floor (`powershape smooth`): the session's sampler reads the GPU's
// power (the driver's 20 ms samples where it keeps them, else the instantaneous field, else the
// averaged one), the controller (floor_controller.hpp) turns each reading, and the job's gap marks
// where it gives them, into an intensity, and the filler runs at it. Before the job the floor ramps
// up from the power found; after it, down to nothing.
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "powershape/monitor/session.hpp"
#include "powershape/shape/filler.hpp"
#include "powershape/shape/floor_controller.hpp"
#include "powershape/shape/pacer.hpp"

namespace powershape::shape {

struct SmoothOptions {
  int gpu = 0;             // the session's device the filler runs on
  std::string gap_region;  // non-empty: the job marks its gaps with this region
  int turn_ms = 5;         // the longest wait between two decisions (1-1000 ms)
  int64_t settle_ns = 0;   // how far back a reading reaches (0: by the signal, 25 ms for the
                           // driver's samples to 1.1 s for the averaged power)
};

struct SmoothResult {
  int exit_code = 0;           // the session's (the job's)
  double filled_s = 0;         // seconds of filler work
  double ramp_up_s = 0;        // the ramp's time before the job started
  double ramp_down_s = 0;      // and after it ended
  double learned = 0;          // the floor's intensity at the end
  double held_s = 0;           // paced: how long the job was held
  int holds = 0;               // and how many times
  bool interrupted = false;    // a SIGINT or SIGTERM cut the ramps short
  std::string filler_failure;  // why the filler stopped before the end (the job ran on without it)
};

// What the run did: the floor and the job's exit, the filler's time and intensity, the ramps'
// times, and (paced) how long the job was held.
void print_smoothed(std::FILE* out, const SmoothResult& r, const FloorOptions& fo, bool paced);

// Starts the session's sampler, ramps the floor up, runs the session's command under the floor,
// ramps down and finishes the session. A SIGINT or SIGTERM stops the ramps at once (the job gets
// the signal as under `monitor`). A filler that fails leaves the job to run on unshaped. The filler
// is at 0 when it returns, also on an exception. With a pacer, the job is held while it says so
// (the session's hold()), and never left held.
SmoothResult run_smoothed(monitor::Session& s, Filler& filler, FloorController& c,
                          const SmoothOptions& o, Pacer* pacer = nullptr);

// `powershape smooth`: a command run on the first GPU of `source` under a floor held by `filler`,
// recorded (to `csv` as it goes, where given) by a session of its own: the controller, the pacer
// (paced: the job's rises held under the floor's ramp rate over `ramp_window_s`) and the
// sampler's cadence for a floor (its driver's readings harvested every 40 ms) set up here.
struct SmoothJob {
  std::vector<std::string> command;
  std::string gap_region;  // non-empty: the job marks its gaps with this region
  std::string csv;
  FloorOptions floor;
  bool pace = false;
  double ramp_window_s = 1;
  double interval_ms = 10;
};
struct SmoothRun {
  SmoothResult result;
  trace::Trace trace;
  bool file_failed = false;  // the CSV could not be written to its end
};
// open_filler: called once the floor and the pacer have taken their options (a bad one is refused
// before the GPU is touched). say: the session's warnings, and one line of what is held before
// the job starts.
SmoothRun smooth_job(telemetry::Source& source,
                     const std::function<std::unique_ptr<Filler>()>& open_filler,
                     const SmoothJob& job, const std::function<void(const std::string&)>& say);

}  // namespace powershape::shape
