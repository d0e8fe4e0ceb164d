#pragma once
// The mechanisms a small box may have (Profile's thermal slowdown, spike loop, fan and supply),
// fitted from a recording of the device: each from the telemetry that shows it at work (NVML's
// reasons, clock, temperature and fan speed), or kept as the profile has it, with the reason.
#include <string>
#include <vector>

#include "powershape/sim/profile.hpp"
#include "powershape/trace/trace.hpp"

namespace powershape::sim {

struct MechanismFit {
  Profile profile;                 // the start, with what the recording showed set
  std::vector<std::string> lines;  // one a mechanism: what was fitted from what, or why not
};

// Reads GPU `gpu`'s rows of `t`:
// - thermal slowdown (SW thermal reason): slowdown_c the median temperature as it sets in; the
//   hysteresis down to the median temperature at which the clock takes a step back while it
//   holds (a recording that goes idle now and then shows it); the step the median of the clock's
//   drops while it holds, of those over half the largest (the other loops move it by less), the
//   interval the median time between two of them in one spell; the smooth thermal loop then off
//   (the staircase replaces it);
// - the clock's recovery (no reason but idle or the power cap holding): the median rate of its
//   rises of two steps or more, the spike loop's recovery where the profile has one (reported
//   otherwise);
// - fan (fan speed read): its floor where it rests a second or more (else the profile's, or the
//   lowest read); start_c and full_c from a straight line of speed against the temperature some
//   lag earlier, the lag (the fit's best) as tau_s; hysteresis and the sink's resistance kept;
// - supply (HW power brake reason): the median clock while it holds as degraded_mhz; its hold,
//   limit, rest and window kept (a brake that trips again at once under load shows as one long
//   hold in readings 100 ms apart, and the rest of the box is not in the recording).
// Throws naming what is missing when the recording has no clock or temperature readings of `gpu`,
// and naming the figure when a fitted one is out of its range.
MechanismFit fit_mechanisms(const Profile& start, const trace::Trace& t, int gpu = 0);

}  // namespace powershape::sim
