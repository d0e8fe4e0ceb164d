#pragma once
// summarize() for a recording too long to hold: its readings go by once, each signal of each GPU
// in time order, and only what the summaries need stays (each window's running figures, the
// energy counter's changes, the power integral at the times the counter's interpolation asks).
// The summaries equal summarize()'s up to the rounding of sums taken in another order.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "powershape/analysis/summary.hpp"

namespace powershape::analysis {

// One window of one GPU.
struct SummaryWindow {
  std::string name;
  int gpu = 0;
  int64_t from_ns = 0, to_ns = 0;
};

// The windows summarize(t) summarises, in its order: each GPU's whole recording (its first to its
// last row, `extent`), then every region on every GPU it covers.
std::vector<SummaryWindow> summary_windows(const std::map<int, std::pair<int64_t, int64_t>>& extent,
                                           const std::vector<telemetry::Region>& regions);

// What the stream must know before the readings go by, per GPU: its energy counter's readings
// (only those where it changed are needed), and which power signal is its finest (the driver's
// buffer, else the instantaneous field, else the 1 s average: the first with readings) with that
// signal's first reading's time.
struct SummaryPlan {
  std::vector<SummaryWindow> windows;
  std::map<int, std::vector<Point>> energy;
  std::map<int, telemetry::Signal> fine;
  std::map<int, int64_t> fine_first_ns;
  // The SM-clock histogram cells the stream may hold at once: per GPU, the most windows any moment
  // lies in times the distinct clocks it read (each window holds its histogram until it ends).
  std::size_t clock_cells = 0;
};

// Gathers a plan from a first pass over the rows.
class SummaryPlanner {
 public:
  void add(const telemetry::Sample& row);
  SummaryPlan plan(const std::vector<telemetry::Region>& regions) const;
  // Whether each signal of each GPU came in time order, as the stream needs (every recorder
  // writes them so; another tool's file may not).
  bool in_time_order() const { return ordered_; }

 private:
  std::map<int, std::pair<int64_t, int64_t>> extent_;
  std::map<std::pair<int, telemetry::Signal>, int64_t> last_t_;
  std::map<std::pair<int, telemetry::Signal>, int64_t> first_t_;
  std::map<int, std::vector<Point>> energy_;
  std::map<int, std::vector<bool>> clocks_;  // per GPU, each MHz read (at most SignalSpec::most)
  std::map<int, std::size_t> distinct_clocks_;
  bool ordered_ = true;
};

class SummaryStream {
 public:
  explicit SummaryStream(SummaryPlan plan);
  ~SummaryStream();
  // Each signal of each GPU in time order; the signals and GPUs interleaved as they come.
  void add(int gpu, telemetry::Signal s, Point p);
  void add(const telemetry::Sample& row);  // each valid reading of a row
  // The summaries, in the windows' order.
  std::vector<Summary> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace powershape::analysis
