#pragma once
// monitor's and exporter's one call: a command (or, without one, everything until Ctrl-C)
// recorded by a monitor::Session, with Prometheus published once a second (the textfile, the
// /metrics server, each GPU's energy by process), a live view, and the CPU's energy from RAPL;
// then the recording's summaries and energies printed and its outputs written, each on its own.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "powershape/report/run_outputs.hpp"

namespace powershape::job {

struct MonitorRun {
  double interval_ms = 10, slow_interval_ms = 1000;  // monitor::check_periods' bounds
  bool every_interval = false;  // every signal every interval, however often the driver updates
  std::vector<int> gpus;        // empty: all
  std::string source = "nvml";  // trace::open_source's, and sim:PROFILE
  std::string csv;              // the trace, written as it is recorded; empty: none
  bool every_row = false;
  report::RunOutputs outputs;
  std::string textfile;        // node_exporter's textfile, rewritten each second; empty: none
  std::string prometheus;      // [ADDR:]PORT to serve /metrics on while recording; empty: none
  double keep_s = 0;           // > 0: only the last keep_s seconds are kept in memory
  double tokens_per_step = 0;  // > 0: the energy a token of the command's `step` regions
  bool live = false;           // a line a GPU a few times a second, on the output
  std::vector<std::string> command;
};

struct MonitorSay {
  std::function<void(const std::string&)> note;  // what it serves, the session's warnings
  report::SayFn output;                          // an output that could not be written
  std::string kept_in;  // where every GPU's summary is kept when the table shows a few
  std::string tokens;   // how an energy a token is asked for, said where none could be had
};

// The summaries, energies and the sampler's costs go to `out`; a `say` left empty says nothing.
// Returns the command's exit code, or 1 where it succeeded and an output (the CSV, a file of
// `outputs`) was lost.
int run_monitor(const MonitorRun& o, std::FILE* out, const MonitorSay& say);

}  // namespace powershape::job
