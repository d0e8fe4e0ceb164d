#pragma once
#include <functional>
#include <string>

#include "powershape/experiment/backend.hpp"

namespace powershape::experiment {

struct RecordPlan {
  std::vector<int> periods_ms;    // square-wave periods
  std::vector<std::string> gaps;  // idle, memory
  std::vector<double> duties = {0.25, 0.5, 0.75};
  double window_s = 2;      // per square wave (at least 4 periods)
  double sustained_s = 30;  // products back to back, from idle
  std::vector<int> chunks = {1, 2, 4, 8, 16, 32, 64};
  int kernel_iterations = 5;
  // Called after each condition (done of total, seconds so far), or not at all when empty.
  std::function<void(int, int, double)> progress;
};

// `probe --record DIR`: what a calibration needs, recorded on the device at hand into a new
// folder: trace.csv (the whole session's telemetry, each condition a region), conditions.json
// (each condition's figures: burst throughput from device timing, clock, power, energy) and
// kernels.csv (each kernel of the LM head at two shapes and of matmul-softmax-matmul at 1-64
// chunks, timed on its own), and on a GPU clock_probe.csv (the on-GPU clock probe across a load
// step from idle: t_ms, sm_clock_mhz). Refuses a folder that holds anything. Returns the seconds it
// took.
double record_probe(Backend& b, const RecordPlan& plan, const std::string& dir);

}  // namespace powershape::experiment
