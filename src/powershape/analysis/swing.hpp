#pragma once
// A job's power swings in the grid's terms (docs/grid.md): how fast its power ramps, how far it
// moves inside a short window, the period it repeats with, and where its variation's energy sits
// in frequency; then each limit of a grid spec, passed or failed. Synchronous training moves
// every GPU together, so a recording of a few GPUs scales to a fleet by a factor (the worst
// case: no two groups out of step).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "powershape/analysis/grid_spec.hpp"
#include "powershape/analysis/power_series.hpp"
#include "powershape/analysis/spectrum.hpp"

namespace powershape::analysis {

struct SwingOptions {
  double ramp_window_s = 1;
  double range_window_s = 10;
  double segment_s = 20;  // Welch's segment: 20 s resolves 0.05 Hz
  double scale = 1;       // the fleet as a multiple of the recording
  double rated_w = 0;     // the recording's rated power (its GPUs' limits); 0: not known
};

// The spec's own ramp and range windows, for its verdicts, with the rated power and the scale.
SwingOptions swing_options(const GridSpec& spec, double rated_w = 0, double scale = 1);

struct Ramp {
  double up_max_w_per_s = 0, down_max_w_per_s = 0;  // both positive
  double p99_w_per_s = 0;                           // of the ramp's size, up or down
};

// The change of the mean power over one window to the mean over the next, per second, at every
// sample: a swing faster than the window is seen at its window-averaged size. Zero ramps when the
// series is shorter than two windows.
Ramp ramp_rates(const PowerSeries& p, double window_s);

// The largest max - min inside any window of `window_s` (the whole series when shorter).
double max_range_w(const PowerSeries& p, double window_s);

struct BandResult {
  GridBand band;
  double share = 0;
  double rms_w = 0;       // the band's RMS, scaled to the fleet
  double seen_hi_hz = 0;  // the band's upper edge, or the Nyquist frequency where that is lower
  bool failed = false;    // over one of its limits
  bool unknown = false;   // one of its limits could not be judged
};

struct Verdict {
  std::string limit;    // "ramp up", "ramp down", "range", "band 0.1-20 Hz", "rms 0.1-20 Hz"
  double measured = 0;  // in `unit`
  double allowed = 0;   // in `unit`; NaN where the rated power is needed and not known
  std::string unit;     // "W/s", "W", "share"
  std::string source;
  bool known = true;  // false: the allowed value could not be computed
  bool pass = false;
  std::string note;  // why not known, or what the figure could not see
};

struct Swing {
  double scale = 1, rated_w = 0;  // both scaled to the fleet
  double dt_s = 0, duration_s = 0;
  double mean_w = 0, min_w = 0, max_w = 0;
  double ramp_window_s = 0, range_window_s = 0;
  Ramp ramp;
  double range_w = 0;
  double period_s = 0;               // 0: no period found
  Spectrum spectrum;                 // of the fleet's power
  std::vector<BandResult> bands;     // the spec's
  std::vector<BandResult> overview;  // below 0.1 Hz, 0.1-1, 1-20 and above 20 Hz
  std::vector<Verdict> verdicts;
};

// Every figure of `p` scaled by o.scale, and each of the spec's limits checked against it. Ramps
// and ranges are measured over the options' windows: give the spec's for its verdicts (a verdict
// over another window says so in its note).
Swing analyse_swing(const PowerSeries& p, const GridSpec& spec, const SwingOptions& o);

// The figures, the spectrum (up to `max_bins` bins, adjacent ones averaged) and the verdicts, for
// machines and for the report's plot. An unknown allowed value is null.
nlohmann::json to_json(const Swing& s, std::size_t max_bins = 2048);

}  // namespace powershape::analysis
